package org.inagg.perf.cluster;

import java.time.Duration;

import org.inagg.api.JobContext;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.FaultConfig;

/**
 * How to build a {@link LocalCluster}.
 *
 * @param workers           workers in the job.
 * @param slots             switch slots of the job (each worker's window).
 * @param lanesPerPacket    int32 lanes per packet.
 * @param transport         how the nodes are joined.
 * @param faults            faults injected on every node's receive path (seeded per node).
 * @param retransmitTimeout time after which a worker resends an unanswered packet.
 * @param peerTimeout       time without progress after which an operation fails.
 * @param idleStrategy      idle strategy name of the agent threads.
 * @param threads           agent threads the switch and workers are spread over.
 */
public record ClusterOptions(
    int workers,
    int slots,
    int lanesPerPacket,
    TransportKind transport,
    FaultConfig faults,
    Duration retransmitTimeout,
    Duration peerTimeout,
    String idleStrategy,
    int threads)
{
    public static final int JOB_ID = 1;

    public ClusterOptions
    {
        if (threads < 1)
        {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
        new SwitchJobConfig(JOB_ID, workers, slots, lanesPerPacket);
    }

    /** Defaults: in-process, 128 slots of 256 lanes, no faults, one agent thread. */
    public static ClusterOptions defaults(final int workers)
    {
        return new ClusterOptions(workers, SwitchJobConfig.DEFAULT_SLOTS, SwitchJobConfig.DEFAULT_LANES,
            TransportKind.INPROC, FaultConfig.NONE,
            Duration.ofNanos(JobContext.RETRANSMIT_TIMEOUT_DEFAULT_US * 1000),
            Duration.ofSeconds(10), "backoff", 1);
    }

    public ClusterOptions withTransport(final TransportKind kind)
    {
        return new ClusterOptions(workers, slots, lanesPerPacket, kind, faults, retransmitTimeout, peerTimeout,
            idleStrategy, threads);
    }

    public ClusterOptions withFaults(final FaultConfig newFaults)
    {
        return new ClusterOptions(workers, slots, lanesPerPacket, transport, newFaults, retransmitTimeout, peerTimeout,
            idleStrategy, threads);
    }

    public ClusterOptions withSlots(final int newSlots)
    {
        return new ClusterOptions(workers, newSlots, lanesPerPacket, transport, faults, retransmitTimeout, peerTimeout,
            idleStrategy, threads);
    }

    public ClusterOptions withLanes(final int lanes)
    {
        return new ClusterOptions(workers, slots, lanes, transport, faults, retransmitTimeout, peerTimeout,
            idleStrategy, threads);
    }

    public ClusterOptions withTimeouts(final Duration retransmit, final Duration peer)
    {
        return new ClusterOptions(workers, slots, lanesPerPacket, transport, faults, retransmit, peer, idleStrategy,
            threads);
    }

    public ClusterOptions withThreads(final int newThreads, final String idle)
    {
        return new ClusterOptions(workers, slots, lanesPerPacket, transport, faults, retransmitTimeout, peerTimeout,
            idle, newThreads);
    }
}
