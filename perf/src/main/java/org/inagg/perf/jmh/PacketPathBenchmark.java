package org.inagg.perf.jmh;

import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.cluster.ClusterOptions;
import org.inagg.perf.cluster.LocalCluster;
import org.inagg.perf.cluster.TransportKind;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The whole per-packet path, reported per packet: 2 workers and the software switch in this process (one agent
 * thread), each invocation one all-reduce of 262,144 floats per worker, i.e. 1,024 packets of 256 lanes per worker
 * (2,048 per invocation). Every packet is quantized into a transport frame and sent, aggregated by the switch, and its
 * result received and dequantized into the worker's tensor.
 * <p>
 * {@code -prof gc}'s {@code gc.alloc.rate.norm} divides everything the JVM allocated by the packets, the calling
 * thread's per-call objects (request, future) included. The auxiliary counters split that: {@code agentBytes} is what
 * the agent thread (every per-packet step) allocated during the iteration and {@code packets} how many worker packets
 * it moved; their ratio is the per-packet allocation proper.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class PacketPathBenchmark
{
    private static final int WORKERS = 2;
    private static final int ELEMENTS = 262_144;
    private static final int LANES = 256;
    private static final int PACKETS = WORKERS * ELEMENTS / LANES;

    @Param({"inproc", "udp"})
    public String transport;

    private LocalCluster cluster;
    private float[][] sources;
    private float[][] results;
    private long[] agentThreadIds;

    /** Per-iteration totals, printed next to the score. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class AgentAllocation
    {
        public long agentBytes;
        public long packets;
    }

    @Setup(Level.Trial)
    public void setup()
    {
        cluster = LocalCluster.start(ClusterOptions.defaults(WORKERS)
            .withLanes(LANES)
            .withTransport(TransportKind.valueOf(transport.toUpperCase(java.util.Locale.ROOT))));
        agentThreadIds = cluster.agentThreads().stream().mapToLong(Thread::threadId).toArray();
        sources = new float[WORKERS][ELEMENTS];
        results = new float[WORKERS][ELEMENTS];
        final SplittableRandom random = new SplittableRandom(1);
        for (final float[] source : sources)
        {
            for (int i = 0; i < ELEMENTS; i++)
            {
                source[i] = (float)random.nextGaussian();
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        cluster.close();
    }

    @Benchmark
    @OperationsPerInvocation(PACKETS)
    public float[][] allReduce(final AgentAllocation allocation)
    {
        final long before = agentAllocatedBytes();
        cluster.allReduce(sources, results);
        allocation.agentBytes += agentAllocatedBytes() - before;
        allocation.packets += PACKETS;
        return results;
    }

    private long agentAllocatedBytes()
    {
        long sum = 0;
        for (final long bytes : ((com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean())
            .getThreadAllocatedBytes(agentThreadIds))
        {
            sum += bytes;
        }
        return sum;
    }
}
