package org.inagg.p4.esa;

import java.util.Arrays;

import org.inagg.wire.InaggHeader;

/**
 * A job as its parameter server knows it.
 *
 * @param jobId            job id.
 * @param workers          workers whose contributions complete a block.
 * @param workerPeers      each worker's peer in the server's transport.
 * @param switchPeer       the switch, in the server's transport.
 * @param resultsViaSwitch ATP: results go to the switch, which frees the aggregator and multicasts them; ESA: results
 *                         go straight to the workers.
 * @param joinSlots        slots (window) the server grants in a JOIN_ACK to workers that send to it directly (the
 *                         workers a two-level plan assigns to the PS); 0: the server answers no JOIN (the switch does).
 * @param joinLanes        lanes per packet granted with {@code joinSlots}; 0 with it.
 * @param joinCredentials  each worker id's JOIN credential ({@link InaggHeader#NO_CREDENTIAL}: none), or null when
 *                         the job requires none (docs/security.md).
 */
public record ServerJobConfig(int jobId, int workers, int[] workerPeers, int switchPeer, boolean resultsViaSwitch,
                              int joinSlots, int joinLanes, long[] joinCredentials)
{
    public ServerJobConfig
    {
        if (workers < 1 || workerPeers == null || workerPeers.length != workers)
        {
            throw new IllegalArgumentException("job " + jobId + ": needs one peer per worker");
        }
        if (joinSlots < 0 || joinSlots >= InaggHeader.MAX_SLOTS || (joinSlots == 0) != (joinLanes == 0)
            || joinLanes < 0 || joinLanes > InaggHeader.MAX_ELEMENT_COUNT)
        {
            throw new IllegalArgumentException("job " + jobId + ": join slots (" + joinSlots + ") and lanes ("
                + joinLanes + ") must both be 0 or both be in range (slots 1.." + (InaggHeader.MAX_SLOTS - 1)
                + ", lanes 1.." + InaggHeader.MAX_ELEMENT_COUNT + ")");
        }
        workerPeers = workerPeers.clone();
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
    public ServerJobConfig(final int jobId, final int workers, final int[] workerPeers, final int switchPeer,
        final boolean resultsViaSwitch, final int joinSlots, final int joinLanes)
    {
        this(jobId, workers, workerPeers, switchPeer, resultsViaSwitch, joinSlots, joinLanes, null);
    }

    /** Each worker id's JOIN credential (a copy), or null when none is required. */
    @Override
    public long[] joinCredentials()
    {
        return joinCredentials == null ? null : joinCredentials.clone();
    }

    /** A job whose workers join at the switch (the server answers no JOIN). */
    public ServerJobConfig(final int jobId, final int workers, final int[] workerPeers, final int switchPeer,
        final boolean resultsViaSwitch)
    {
        this(jobId, workers, workerPeers, switchPeer, resultsViaSwitch, 0, 0);
    }

    @Override
    public int[] workerPeers()
    {
        return workerPeers.clone();
    }

    /** Whether the server answers JOINs of workers that send to it directly. */
    public boolean answersJoins()
    {
        return joinSlots > 0;
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof ServerJobConfig c && jobId == c.jobId && workers == c.workers
            && Arrays.equals(workerPeers, c.workerPeers) && switchPeer == c.switchPeer
            && resultsViaSwitch == c.resultsViaSwitch && joinSlots == c.joinSlots && joinLanes == c.joinLanes
            && Arrays.equals(joinCredentials, c.joinCredentials);
    }

    @Override
    public int hashCode()
    {
        return 31 * jobId + Arrays.hashCode(workerPeers);
    }

    @Override
    public String toString()
    {
        return "ServerJobConfig[jobId=" + jobId + ", workers=" + workers + ", workerPeers="
            + Arrays.toString(workerPeers) + ", switchPeer=" + switchPeer + ", resultsViaSwitch=" + resultsViaSwitch
            + ", joinSlots=" + joinSlots + ", joinLanes=" + joinLanes + ", joinCredentials="
            + (joinCredentials == null ? "none" : "given") + "]";
    }
}
