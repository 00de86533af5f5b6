package org.inagg.p4.esa;

import java.util.Arrays;

import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.pipeline.NodeJob;
import org.inagg.wire.InaggHeader;

/**
 * A job of the parameter server and its block table, one entry per slot and shadow copy ({@code 2 * slot + copy}), as
 * the switch's {@code SlotPool}: an entry holds the blocks of one copy of one slot, round after round, and a newer
 * round comes only once every worker had the previous result of that copy. The table starts at {@code capacity}
 * entries and grows (to a power of two, at most {@code 2 * MAX_SLOTS}) when a higher slot is first used; a new
 * session frees every entry (and keeps them for reuse).
 */
final class ServerJob extends NodeJob
{
    final ServerJobConfig config;
    final int[] peers;
    ServerBlock[] table;
    int open;
    /** Peers that sent this job a well-formed PARTIAL of its current session: its first-level switches, the only peers
     * besides its configured switch trusted to move it to a newer session with a raw fragment they forwarded or a
     * PARTIAL (at most {@link #MAX_UPSTREAMS} kept). */
    private final int[] upstreams = new int[MAX_UPSTREAMS];
    private int upstreamCount;
    /** Whether {@code config.switchPeer()} names a switch (not the 0 of a job without one, a worker's peer). */
    private final boolean switchConfigured;

    static final int MAX_UPSTREAMS = 64;

    ServerJob(final ServerJobConfig config, final int capacity)
    {
        super(new JobMembership(config.jobId(), config.workers(), config.workerPeers(), config.joinCredentials(), 0,
            true));
        this.config = config;
        this.peers = config.workerPeers();
        this.table = new ServerBlock[capacity];
        this.switchConfigured = config.resultsViaSwitch()
            || Arrays.stream(config.workerPeers()).noneMatch(p -> p == config.switchPeer());
    }

    /** The entry of the message's slot and shadow copy, allocated on first use. */
    ServerBlock entry(final int slotField, final int lanes)
    {
        final int i = ((slotField & (InaggHeader.MAX_SLOTS - 1)) << 1) | (slotField >>> 15);
        if (i >= table.length)
        {
            table = Arrays.copyOf(table, Integer.highestOneBit(i) << 1);
        }
        ServerBlock block = table[i];
        if (block == null)
        {
            block = new ServerBlock(EsaWire.bitmapWords(config.workers()), lanes);
            table[i] = block;
        }
        return block;
    }

    /** Whether the job names its switch (else it knows its switches only by the PARTIALs they send). */
    boolean switchConfigured()
    {
        return switchConfigured;
    }

    /** Notes that {@code peer} forwards this job's PARTIALs (no allocation; a no-op once known or full). */
    void noteUpstream(final int peer)
    {
        for (int i = 0; i < upstreamCount; i++)
        {
            if (upstreams[i] == peer)
            {
                return;
            }
        }
        if (upstreamCount < upstreams.length)
        {
            upstreams[upstreamCount++] = peer;
        }
    }

    /** Whether {@code peer} is the job's configured switch or has forwarded it a PARTIAL of a session it was in. */
    boolean isUpstream(final int peer)
    {
        if (switchConfigured && peer == config.switchPeer())
        {
            return true;
        }
        for (int i = 0; i < upstreamCount; i++)
        {
            if (upstreams[i] == peer)
            {
                return true;
            }
        }
        return false;
    }

    /** Forgets every block: a new session of the job starts afresh. */
    void reset()
    {
        for (final ServerBlock block : table)
        {
            if (block != null)
            {
                block.state = ServerBlock.FREE;
            }
        }
        open = 0;
    }

    /** Only jobs whose workers send to the server directly answer JOINs. */
    @Override
    public boolean serves(final int worker)
    {
        return config.answersJoins() && super.serves(worker);
    }

    @Override
    public int joinSlots()
    {
        return config.joinSlots();
    }

    @Override
    public int joinLanes()
    {
        return config.joinLanes();
    }

    @Override
    public String describe()
    {
        return config.toString();
    }
}
