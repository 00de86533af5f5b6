package org.inagg.p4.softswitch;

import java.util.Arrays;

import org.inagg.fixedpoint.FixedPoint;
import org.inagg.wire.InaggHeader;

/**
 * A row of the switch's job table, as the control plane installs it.
 * <p>
 * Two ways to know which source may speak for a worker id: with {@code workerPeers} null (the four-argument
 * constructor) the switch learns each worker's peer from its JOIN, as before; with {@code workerPeers} given (the control
 * plane of {@code org.inagg.p4.control} always gives them) the sources are registered, a JOIN or AGGREGATE from any
 * other peer is dropped and counted ({@link SwitchCounter#DROP_SOURCE_MISMATCH}), and a JOIN never moves a worker.
 * <p>
 * {@code slotBase} places the job's slots {@code [slotBase, slotBase + slots)} in the switch's shared register pool, as the
 * P4 programs index their registers; the software switch refuses a job whose range overlaps another job's. A job with
 * {@link #NO_SLOT_BASE} has no place in the shared pool (a software-only job); its slots are still its own.
 *
 * @param jobId          job id carried in every packet.
 * @param workers        workers whose contributions complete a slot.
 * @param slots          aggregator slots of the job's pool (each with two shadow copies).
 * @param lanesPerPacket int32 lanes per packet (64, 128, 256 or up to {@link InaggHeader#MAX_ELEMENTS_FOR_1500_MTU}).
 * @param slotBase       first slot of the job in the shared register pool, or {@link #NO_SLOT_BASE}.
 * @param multicastGroup the job's multicast group on a P4 switch (1..65535), or {@link #NO_MULTICAST_GROUP}.
 * @param workerPeers    registered transport peer of each worker id (length {@code workers}), or null to learn them.
 * @param session        the job's session as the control plane starts it (0..65535; docs/sessions.md): installing a
 *                       job again with another session starts a new run of it.
 * @param joinCredentials the JOIN credential of each worker id (length {@code workers}; docs/security.md), which its
 *                       JOINs must show, {@link InaggHeader#NO_CREDENTIAL} for none; or null when the job requires
 *                       none (a job installed without the controller). The controller always gives them.
 */
public record SwitchJobConfig(
    int jobId, int workers, int slots, int lanesPerPacket, int slotBase, int multicastGroup, int[] workerPeers,
    int session, long[] joinCredentials)
{
    public static final int DEFAULT_SLOTS = 128;
    public static final int DEFAULT_LANES = 256;
    /**
     * The most lanes {@link #lanesFillingMtu} gives: a packet that fills a 1500-byte Ethernet MTU, and the most a
     * worker and an agent take by default (their {@code --max-lanes}).
     */
    public static final int MTU_FILLING_MAX_LANES = InaggHeader.MAX_ELEMENTS_FOR_1500_MTU;
    public static final int NO_SLOT_BASE = -1;
    public static final int NO_MULTICAST_GROUP = 0;

    public SwitchJobConfig
    {
        if (jobId < 0 || jobId > InaggHeader.MAX_JOB_ID)
        {
            throw new IllegalArgumentException("job id must be in 0.." + InaggHeader.MAX_JOB_ID + ", got " + jobId);
        }
        if (workers < 1 || workers > FixedPoint.MAX_WORKERS)
        {
            throw new IllegalArgumentException("job " + jobId + ": workers must be in 1.." + FixedPoint.MAX_WORKERS
                + ", got " + workers);
        }
        if (slots < 1 || slots >= InaggHeader.MAX_SLOTS)
        {
            throw new IllegalArgumentException("job " + jobId + ": slots must be in 1.." + (InaggHeader.MAX_SLOTS - 1)
                + ", got " + slots);
        }
        if (lanesPerPacket < 1 || lanesPerPacket > InaggHeader.MAX_ELEMENT_COUNT)
        {
            throw new IllegalArgumentException("job " + jobId + ": lanes per packet must be in 1.."
                + InaggHeader.MAX_ELEMENT_COUNT + ", got " + lanesPerPacket);
        }
        if (slotBase < NO_SLOT_BASE)
        {
            throw new IllegalArgumentException("job " + jobId + ": slot base must be >= 0 (or NO_SLOT_BASE), got "
                + slotBase);
        }
        if (multicastGroup < 0 || multicastGroup > 0xFFFF)
        {
            throw new IllegalArgumentException("job " + jobId + ": multicast group must be in 0..65535, got "
                + multicastGroup);
        }
        if (session < 0 || session > 0xFFFF)
        {
            throw new IllegalArgumentException("job " + jobId + ": session must be in 0..65535, got " + session);
        }
        if (workerPeers != null)
        {
            if (workerPeers.length != workers)
            {
                throw new IllegalArgumentException("job " + jobId + ": " + workerPeers.length
                    + " registered worker peers for " + workers + " workers");
            }
            for (final int peer : workerPeers)
            {
                if (peer < 0)
                {
                    throw new IllegalArgumentException("job " + jobId + ": registered peer " + peer + " is negative");
                }
            }
            workerPeers = workerPeers.clone();
        }
        if (joinCredentials != null)
        {
            if (joinCredentials.length != workers)
            {
                throw new IllegalArgumentException("job " + jobId + ": " + joinCredentials.length
                    + " JOIN credentials for " + workers + " workers");
            }
            joinCredentials = joinCredentials.clone();
        }
    }

    /** A job whose JOINs need no credential. */
    public SwitchJobConfig(
        final int jobId, final int workers, final int slots, final int lanesPerPacket, final int slotBase,
        final int multicastGroup, final int[] workerPeers, final int session)
    {
        this(jobId, workers, slots, lanesPerPacket, slotBase, multicastGroup, workerPeers, session, null);
    }

    /** A job in session 0. */
    public SwitchJobConfig(
        final int jobId, final int workers, final int slots, final int lanesPerPacket, final int slotBase,
        final int multicastGroup, final int[] workerPeers)
    {
        this(jobId, workers, slots, lanesPerPacket, slotBase, multicastGroup, workerPeers, 0);
    }

    /** This job in {@code next} session. */
    public SwitchJobConfig withSession(final int next)
    {
        return new SwitchJobConfig(jobId, workers, slots, lanesPerPacket, slotBase, multicastGroup, workerPeers, next,
            joinCredentials);
    }

    /** This job with {@code credentials} as its workers' JOIN credentials (null: none required). */
    public SwitchJobConfig withJoinCredentials(final long[] credentials)
    {
        return new SwitchJobConfig(jobId, workers, slots, lanesPerPacket, slotBase, multicastGroup, workerPeers,
            session, credentials);
    }

    /** The JOIN credential of each worker id (a copy), or null when the job requires none. */
    @Override
    public long[] joinCredentials()
    {
        return joinCredentials == null ? null : joinCredentials.clone();
    }

    /** Whether any worker's JOINs must show a credential. */
    public boolean credentialsRequired()
    {
        if (joinCredentials != null)
        {
            for (final long credential : joinCredentials)
            {
                if (credential != InaggHeader.NO_CREDENTIAL)
                {
                    return true;
                }
            }
        }
        return false;
    }

    /** A job whose workers' peers are learned from their JOINs, with no place in the shared register pool. */
    public SwitchJobConfig(final int jobId, final int workers, final int slots, final int lanesPerPacket)
    {
        this(jobId, workers, slots, lanesPerPacket, NO_SLOT_BASE, NO_MULTICAST_GROUP, null);
    }

    public SwitchJobConfig(final int jobId, final int workers)
    {
        this(jobId, workers, DEFAULT_SLOTS, DEFAULT_LANES);
    }

    /**
     * The lanes of a packet that fills a link of {@code mtu} bytes after its headers, at most
     * {@link #MTU_FILLING_MAX_LANES} (363 at 1500 and above, 350 at 1450): a software switch's default, where the P4
     * programs' {@link #DEFAULT_LANES} leave a quarter of each 1500-byte frame unused.
     *
     * @throws IllegalArgumentException when the MTU holds no lane after the headers.
     */
    public static int lanesFillingMtu(final int mtu)
    {
        if (mtu < InaggHeader.HEADERS_IN_MTU + Integer.BYTES)
        {
            throw new IllegalArgumentException("an MTU of " + mtu + " bytes holds no lane after the packet's "
                + InaggHeader.HEADERS_IN_MTU + " bytes of headers");
        }
        return Math.min(MTU_FILLING_MAX_LANES, (mtu - InaggHeader.HEADERS_IN_MTU) / Integer.BYTES);
    }

    /**
     * Slots that keep the default job's lanes in flight ({@link #DEFAULT_SLOTS} x {@link #DEFAULT_LANES}) with packets
     * of {@code lanes}: 90 of 363 lanes, so a worker queues no more bytes on its link than with the defaults.
     */
    public static int slotsKeepingLanesInFlight(final int lanes)
    {
        return Math.max(1, Math.min(InaggHeader.MAX_SLOTS - 1, DEFAULT_SLOTS * DEFAULT_LANES / lanes));
    }

    /** Registered peer of each worker id (a copy), or null when peers are learned from JOINs. */
    @Override
    public int[] workerPeers()
    {
        return workerPeers == null ? null : workerPeers.clone();
    }

    public boolean registeredSources()
    {
        return workerPeers != null;
    }

    /** Registered peer of {@code worker}; only when {@link #registeredSources()}. */
    public int workerPeer(final int worker)
    {
        return workerPeers[worker];
    }

    /** Whether this job's slots and {@code other}'s share a register of the shared pool. */
    public boolean overlaps(final SwitchJobConfig other)
    {
        return slotBase != NO_SLOT_BASE && other.slotBase != NO_SLOT_BASE
            && slotBase < other.slotBase + other.slots && other.slotBase < slotBase + slots;
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof SwitchJobConfig c && jobId == c.jobId && workers == c.workers && slots == c.slots
            && lanesPerPacket == c.lanesPerPacket && slotBase == c.slotBase && multicastGroup == c.multicastGroup
            && Arrays.equals(workerPeers, c.workerPeers) && session == c.session
            && Arrays.equals(joinCredentials, c.joinCredentials);
    }

    @Override
    public int hashCode()
    {
        return 31 * (31 * jobId + workers) + Arrays.hashCode(workerPeers);
    }

    @Override
    public String toString()
    {
        return "SwitchJobConfig[jobId=" + jobId + ", workers=" + workers + ", slots=" + slots + ", lanesPerPacket="
            + lanesPerPacket + ", slotBase=" + slotBase + ", multicastGroup=" + multicastGroup + ", workerPeers="
            + Arrays.toString(workerPeers) + ", session=" + session + ", joinCredentials="
            + (credentialsRequired() ? "required" : "none") + "]";
    }
}
