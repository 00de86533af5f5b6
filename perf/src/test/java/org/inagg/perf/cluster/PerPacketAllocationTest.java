package org.inagg.perf.cluster;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.inagg.api.ReduceOp;
import org.junit.jupiter.api.Test;
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
 * bring that back; so the test warms up and then looks for three windows in a row of several thousand packets each with
 * exactly 0 bytes allocated, the start of steady state (one clean window was not enough: a late recompilation
 * allocated 832 B once after it, on both transports). From there each of the next {@link #STEADY_WINDOWS} windows
 * (about 100,000 worker packets) in which the JIT compiled nothing is counted: all but one must allocate 0 bytes, and
 * that one no more than {@link #MAX_BLIP_BYTES}. A per-packet allocation is in every window, and one that is only
 * occasional (a buffer that grows, a slice that escape analysis kept after a recompilation, 64 bytes every 256 duty
 * cycles: tried, and caught) is in several. It runs in a JVM of its own (perf/pom.xml,
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
    private static final int CLEAN_TO_SETTLE = 3;
    private static final int MAX_STEADY_WINDOWS = 5 * STEADY_WINDOWS;
    /**
     * One window of the ten may hold one blip of a few hundred bytes: 832 B (in-process) and 232 B (UDP) were seen once
     * in some runs on the loaded 2-core build machine, in windows without a compilation, not explained (a deoptimized
     * moment or the JDK's selector); a per-packet allocation puts kilobytes in every window, and an occasional one
     * (64 bytes every 256 duty cycles, tried: 2 and 3 windows of 10) in more than one. Rarer ones (every 4,096 duty
     * cycles, about one window in ten) pass: that is the limit of this test.
     */
    private static final long MAX_BLIP_BYTES = 1024;

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
            final int packetsPerWindow = OPS_PER_WINDOW * WORKERS * (ELEMENTS / options.lanesPerPacket());
            assertSteadyStateAllocatesNothing(cluster, threads, () -> cluster.allReduce(sources, results),
                packetsPerWindow, transport.toString());
            assertThat(results[0]).containsExactly(results[1]);
        }
    }

    /**
     * The other collectives' per-packet paths (issue 25): a reduce-scatter SUM of floats (header-only results to the
     * workers that do not own a part), an all-gather (header-only contributions, raw INT32 lanes) and an all-reduce MAX
     * (order-preserving keys, the switch's vector maximum) per operation, in process.
     */
    @Test
    void shouldAllocateNothingPerPacketInTheOtherCollectives()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter on this JVM");
        threads.setThreadAllocatedMemoryEnabled(true);

        final ClusterOptions options = ClusterOptions.defaults(WORKERS).withTransport(TransportKind.INPROC);
        try (LocalCluster cluster = LocalCluster.start(options))
        {
            final float[][] sources = new float[WORKERS][ELEMENTS];
            final float[][] shards = new float[WORKERS][ELEMENTS / WORKERS];
            final float[][] gathered = new float[WORKERS][ELEMENTS];
            final SplittableRandom random = new SplittableRandom(11);
            for (final float[] source : sources)
            {
                for (int i = 0; i < ELEMENTS; i++)
                {
                    source[i] = (float)random.nextGaussian();
                }
            }
            final Runnable collectives = () ->
            {
                cluster.run(w -> cluster.worker(w).reduceScatterAsync(sources[w], shards[w], ReduceOp.SUM));
                cluster.run(w -> cluster.worker(w).allGatherAsync(shards[w], gathered[w]));
                cluster.run(w -> cluster.worker(w).allReduceAsync(gathered[w], ReduceOp.MAX));
            };
            final int packetsPerWindow = OPS_PER_WINDOW * WORKERS * (ELEMENTS / options.lanesPerPacket()) * 3;
            assertSteadyStateAllocatesNothing(cluster, threads, collectives, packetsPerWindow, "collectives");
            assertThat(gathered[0]).containsExactly(gathered[1]);
        }
    }

    private static void assertSteadyStateAllocatesNothing(
        final LocalCluster cluster, final com.sun.management.ThreadMXBean threads, final Runnable operation,
        final int packetsPerWindow, final String transport)
    {
        final long[] ids = cluster.agentThreads().stream().mapToLong(Thread::threadId).toArray();
        assertThat(ids).isNotEmpty();
        for (int i = 0; i < WARMUP_OPS; i++)
        {
            operation.run();
        }

        final List<Long> windows = new ArrayList<>();
        while (windows.size() < MAX_WINDOWS && !endsClean(windows))
        {
            windows.add(allocatedIn(operation, threads, ids));
        }
        assertThat(endsClean(windows))
            .as("bytes allocated by the agent threads in each window of %d worker packets (%s transport), the last"
                + " 20 of %d windows: %s", packetsPerWindow, transport, windows.size(),
                windows.subList(Math.max(0, windows.size() - 20), windows.size()))
            .isTrue();
        // Every window in which the JIT compiled nothing must be clean; a window with a compilation may carry its
        // deoptimized, boxing moments (they are listed in the message, not counted).
        final java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        final List<Long> quiet = new ArrayList<>();
        final List<Long> compiling = new ArrayList<>();
        for (int i = 0; i < MAX_STEADY_WINDOWS && quiet.size() < STEADY_WINDOWS; i++)
        {
            final long jitBefore = jit.getTotalCompilationTime();
            final long bytes = allocatedIn(operation, threads, ids);
            (jit.getTotalCompilationTime() == jitBefore ? quiet : compiling).add(bytes);
        }
        final String message = String.format("bytes allocated by the agent threads in each window of %d worker"
            + " packets (%s transport) in which the JIT compiled nothing, after %d clean windows in a row that end"
            + " at window %d (windows with a compilation: %s)", packetsPerWindow, transport, CLEAN_TO_SETTLE,
            windows.size(), compiling);
        assertThat(quiet).as(message).hasSize(STEADY_WINDOWS);
        assertThat(quiet.stream().filter(bytes -> bytes != 0).count())
            .as(message + ": at most one window may hold a blip").isLessThanOrEqualTo(1);
        assertThat(quiet).as(message + ": a blip of at most %d bytes", MAX_BLIP_BYTES)
            .allMatch(bytes -> bytes <= MAX_BLIP_BYTES);
    }

    /** Steady state starts after {@link #CLEAN_TO_SETTLE} clean windows in a row (one clean window came too early: a
     * late C2 recompilation still allocated a few hundred bytes once, in both transports). */
    private static boolean endsClean(final List<Long> windows)
    {
        if (windows.size() < CLEAN_TO_SETTLE)
        {
            return false;
        }
        return windows.subList(windows.size() - CLEAN_TO_SETTLE, windows.size()).stream().allMatch(w -> w == 0);
    }

    private static long allocatedIn(
        final Runnable operation, final com.sun.management.ThreadMXBean threads, final long[] ids)
    {
        final long before = allocated(threads, ids);
        for (int i = 0; i < OPS_PER_WINDOW; i++)
        {
            operation.run();
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
