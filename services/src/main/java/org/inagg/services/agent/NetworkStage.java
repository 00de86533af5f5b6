package org.inagg.services.agent;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.inagg.api.AllReduceJob;
import org.inagg.api.ElementType;
import org.inagg.api.JobContext;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;

/**
 * The host's stream through the switch for a job that spans several hosts: the host's in-host sum goes out as worker
 * {@code hostIndex} of switch job {@code switchJob} and comes back as the sum over all hosts (fixed point, see
 * {@link org.inagg.fixedpoint.FixedPoint} for the bound; int32 exact). The job is opened on a thread of its own, since
 * the join waits for the switch, and every round is chained after it.
 */
final class NetworkStage implements AutoCloseable
{
    /** Largest lanes per packet accepted from the switch (as {@code inagg worker --max-lanes}). */
    private static final int MAX_LANES = 363;

    private final CompletableFuture<AllReduceJob> job;

    NetworkStage(final InetSocketAddress switchAddress, final int switchJob, final int hostIndex, final int hosts,
        final Duration peerTimeout)
    {
        job = CompletableFuture.supplyAsync(() -> AllReduceJob.open(new JobContext()
            .jobId(switchJob).workerId(hostIndex).workers(hosts)
            .transport(UdpTransport.open(new InetSocketAddress(0), List.of(switchAddress), 1,
                InaggHeader.messageLength(MAX_LANES), 64))
            .peerTimeout(peerTimeout)
            .idleStrategy("backoff")));
    }

    /** All-reduces {@code count} elements of {@code data} in place through the switch. */
    CompletableFuture<Void> allReduce(final MemorySegment data, final long count, final int dtype)
    {
        final MemorySegment round = data.asSlice(0, count * AgentProtocol.elementBytes(dtype));
        final ElementType type = dtype == AgentProtocol.DTYPE_FLOAT32 ? ElementType.FLOAT32 : ElementType.INT32;
        return job.thenCompose(j -> j.allReduceAsync(round, round, type));
    }

    @Override
    public void close()
    {
        job.thenAccept(AllReduceJob::close);
        job.cancel(false);
    }
}
