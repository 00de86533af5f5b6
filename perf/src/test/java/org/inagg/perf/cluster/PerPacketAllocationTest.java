package org.inagg.perf.cluster;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The per-packet path allocates nothing in steady state: a worker building and sending packets (quantize into the
 * transport's frames), the software switch aggregating them and multicasting results, a worker receiving them
 * (dequantize into the tensor). Counted with the JVM's per-thread allocation counter on the agent threads, where every
 * one of those steps runs; the calling thread's per-call objects (request, future) are not theirs.
 * <p>
 * Until C2 has compiled the vector code, the interpreter and C1 box every vector, and a deoptimization can briefly
 * bring that back; so the test warms up and then looks for a window of several thousand packets with exactly 0 bytes
 * allocated, the start of steady state. From there every one of the next {@link #STEADY_WINDOWS} windows (about 100,000
 * worker packets) must allocate 0 bytes too: a per-packet allocation is in every window, and one that is only
 * occasional (a buffer that grows, a slice that escape analysis kept after a recompilation) is in one of them. It runs in a JVM of its own (perf/pom.xml,
 * execution {@code allocation}): after the other tests' UDP and fault paths, the JIT's profiles of the shared transport
 * code left about 1 B per packet allocated in CI.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class PerPacketAllocationTest
{
    private static final int WORKERS = 2;
    private static final int ELEMENTS = 262_144;
    private static final int OPS_PER_WINDOW = 5;
    private static final int WARMUP_OPS = 30;
    /**
     * Over loopback UDP the JIT's warm-up (C1, deoptimizations, recompilations) lasted up to about 250 all-reduces of
     * this size on the 2-core build machine; a real per-packet allocation never ends, so the bound can be generous.
     */
    private static final int MAX_WINDOWS = 400;
    private static final int STEADY_WINDOWS = 10;

    @ParameterizedTest
    @EnumSource(value = TransportKind.class, names = {"INPROC", "UDP"})
    void shouldAllocateNothingPerPacketOnTheAgentThreadsInSteadyState(final TransportKind transport)
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter on this JVM");
        threads.setThreadAllocatedMemoryEnabled(true);

        final ClusterOptions options = ClusterOptions.defaults(WORKERS).withTransport(transport);
        try (LocalCluster cluster = LocalCluster.start(options))
        {
            final float[][] sources = new float[WORKERS][ELEMENTS];
            final float[][] results = new float[WORKERS][ELEMENTS];
            final SplittableRandom random = new SplittableRandom(7);
            for (final float[] source : sources)
            {
                for (int i = 0; i < ELEMENTS; i++)
                {
                    source[i] = (float)random.nextGaussian();
                }
            }
            final long[] ids = cluster.agentThreads().stream().mapToLong(Thread::threadId).toArray();
            assertThat(ids).isNotEmpty();
            for (int i = 0; i < WARMUP_OPS; i++)
            {
                cluster.allReduce(sources, results);
            }

            final int packetsPerWindow = OPS_PER_WINDOW * WORKERS * (ELEMENTS / options.lanesPerPacket());
            final List<Long> windows = new ArrayList<>();
            while (windows.size() < MAX_WINDOWS && (windows.isEmpty() || windows.getLast() != 0))
            {
                windows.add(allocatedIn(cluster, sources, results, threads, ids));
            }
            assertThat(windows.getLast())
                .as("bytes allocated by the agent threads in each window of %d worker packets (%s transport), the last"
                    + " 20 of %d windows: %s", packetsPerWindow, transport, windows.size(),
                    windows.subList(Math.max(0, windows.size() - 20), windows.size()))
                .isZero();
            final List<Long> steady = new ArrayList<>();
            for (int i = 0; i < STEADY_WINDOWS; i++)
            {
                steady.add(allocatedIn(cluster, sources, results, threads, ids));
            }
            assertThat(steady)
                .as("bytes allocated by the agent threads in each of the %d windows of %d worker packets (%s transport)"
                    + " after the first clean one (window %d)", STEADY_WINDOWS, packetsPerWindow, transport,
                    windows.size())
                .containsOnly(0L);
            assertThat(results[0]).containsExactly(results[1]);
        }
    }

    private static long allocatedIn(
        final LocalCluster cluster,
        final float[][] sources,
        final float[][] results,
        final com.sun.management.ThreadMXBean threads,
        final long[] ids)
    {
        final long before = allocated(threads, ids);
        for (int i = 0; i < OPS_PER_WINDOW; i++)
        {
            cluster.allReduce(sources, results);
        }
        return allocated(threads, ids) - before;
    }

    private static long allocated(final com.sun.management.ThreadMXBean threads, final long[] ids)
    {
        long sum = 0;
        for (final long bytes : threads.getThreadAllocatedBytes(ids))
        {
            assertThat(bytes).as("allocation counter of an agent thread").isNotNegative();
            sum += bytes;
        }
        return sum;
    }
}
