package org.inagg.perf.jmh;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.transport.DiscardTransport;
import org.inagg.wire.InaggHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The parameter server at the top of two-level aggregation: per invocation one block of a 16-worker job arrives as
 * four PARTIALs (reason SUBTREE, 4 workers each, 256 lanes) from four switches; the fourth completes it and the result
 * goes to all 16 workers into a transport that discards it. Reported per PARTIAL.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class ParameterServerBenchmark
{
    static final int SWITCHES = 4;
    private static final int WORKERS = 16;
    private static final int LANES = 256;

    private ParameterServer server;
    private MemorySegment partials;
    private int length;
    private int sequence;

    @Setup(Level.Trial)
    public void setup()
    {
        server = new ParameterServer(new DiscardTransport(65536), new CounterRegistry(64), 64, 4096);
        final int[] peers = new int[WORKERS];
        for (int w = 0; w < WORKERS; w++)
        {
            peers[w] = 10 + w;
        }
        server.addJob(new ServerJobConfig(1, WORKERS, peers, 0, false));
        server.applyControl();
        length = EsaWire.partialLength(LANES, WORKERS);
        partials = Arena.ofAuto().allocate((long)length * SWITCHES, 64);
        for (int s = 0; s < SWITCHES; s++)
        {
            final long o = (long)s * length;
            EsaWire.writePartialHeader(partials, o, InaggHeader.FLAG_INT32, 1, 0, 0, 0, LANES, 1, 0, -3, 0,
                EsaWire.REASON_SUBTREE);
            for (int k = 0; k < LANES; k++)
            {
                InaggHeader.setElement(partials, o, k, k * (s + 1));
            }
            EsaWire.setPartialBitmapWord(partials, o, LANES, 0, 0xF << (4 * s));
        }
    }

    @Benchmark
    @OperationsPerInvocation(SWITCHES)
    public void mergeOneBlockPerInvocation()
    {
        for (int s = 0; s < SWITCHES; s++)
        {
            final long o = (long)s * length;
            InaggHeader.setSequence(partials, o, sequence);
            server.onMessage(partials, o, length, s);
        }
        sequence++;
    }
}
