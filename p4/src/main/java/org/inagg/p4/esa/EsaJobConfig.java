package org.inagg.p4.esa;

import java.util.Arrays;

import org.inagg.fixedpoint.FixedPoint;
import org.inagg.wire.InaggHeader;

/**
 * A row of the ESA switch's job table.
 *
 * @param jobId               job id carried in every packet.
 * @param workers             workers whose contributions complete a block.
 * @param lanesPerPacket      most lanes a packet of the job carries (at most the pool's lanes per aggregator).
 * @param window              slots the JOIN_ACK offers the workers: the blocks each keeps in flight (it may exceed the
 *                            pool; what does not fit goes to the server).
 * @param priority            static priority (for {@link PriorityPolicy#JOB_TABLE}), 0..255.
 * @param workerPeers         transport peer of each worker id, in the switch's transport.
 * @param parameterServerPeer the job's parameter server, in the switch's transport.
 * @param totalBytes          the job's gradient bytes, the starting point of its remaining work (SRF).
 * @param joinCredentials     each worker id's JOIN credential ({@link InaggHeader#NO_CREDENTIAL}: none), or null when
 *                            the job requires none (docs/security.md).
 */
public record EsaJobConfig(
    int jobId, int workers, int lanesPerPacket, int window, int priority, int[] workerPeers, int parameterServerPeer,
    long totalBytes, long[] joinCredentials)
{
    public EsaJobConfig
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
        if (lanesPerPacket < 1 || lanesPerPacket > InaggHeader.MAX_ELEMENT_COUNT)
        {
            throw new IllegalArgumentException("job " + jobId + ": lanes per packet out of range: " + lanesPerPacket);
        }
        if (window < 1 || window >= InaggHeader.MAX_SLOTS)
        {
            throw new IllegalArgumentException("job " + jobId + ": window must be in 1.." + (InaggHeader.MAX_SLOTS - 1)
                + ", got " + window);
        }
        if (priority < 0 || priority > 255)
        {
            throw new IllegalArgumentException("job " + jobId + ": priority must be in 0..255, got " + priority);
        }
        if (workerPeers == null || workerPeers.length != workers)
        {
            throw new IllegalArgumentException("job " + jobId + ": needs one registered peer per worker");
        }
        if (parameterServerPeer < 0 || totalBytes < 0)
        {
            throw new IllegalArgumentException("job " + jobId + ": parameter server peer and total bytes must be >= 0");
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
    public EsaJobConfig(
        final int jobId, final int workers, final int lanesPerPacket, final int window, final int priority,
        final int[] workerPeers, final int parameterServerPeer, final long totalBytes)
    {
        this(jobId, workers, lanesPerPacket, window, priority, workerPeers, parameterServerPeer, totalBytes, null);
    }

    @Override
    public int[] workerPeers()
    {
        return workerPeers.clone();
    }

    /** Each worker id's JOIN credential (a copy), or null when none is required. */
    @Override
    public long[] joinCredentials()
    {
        return joinCredentials == null ? null : joinCredentials.clone();
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof EsaJobConfig c && jobId == c.jobId && workers == c.workers
            && lanesPerPacket == c.lanesPerPacket && window == c.window && priority == c.priority
            && Arrays.equals(workerPeers, c.workerPeers)
            && parameterServerPeer == c.parameterServerPeer && totalBytes == c.totalBytes
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
        return "EsaJobConfig[jobId=" + jobId + ", workers=" + workers + ", lanesPerPacket=" + lanesPerPacket
            + ", window=" + window + ", priority=" + priority + ", workerPeers=" + Arrays.toString(workerPeers)
            + ", parameterServerPeer=" + parameterServerPeer + ", totalBytes=" + totalBytes + ", joinCredentials="
            + (joinCredentials == null ? "none" : "given") + "]";
    }
}
