package org.inagg.perf.jmh;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.inagg.agent.CounterRegistry;
import org.inagg.agent.counters.CountersDirectory;
import org.inagg.agent.counters.CountersFile;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.DiscardTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
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
 * The software switch's per-packet cost: one invocation feeds the W contributions of one slot round (256 lanes each),
 * the last of which completes it and multicasts W results into a transport that discards them. Reported per packet.
 * {@code counters}: the switch's counters in process memory, or in a mapped counters file as {@code inagg switch} has
 * them (the file goes to the counters directory, see {@link CountersDirectory}, and is removed at the end).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class SwitchAggregationBenchmark
{
    static final int WORKERS = 8;
    private static final int LANES = 256;
    private static final int SLOTS = 128;

    @Param({"memory", "file"})
    public String counters;

    private CountersFile countersFile;
    private SoftwareSwitch softwareSwitch;
    private MemorySegment packets;
    private int length;
    private int round;

    @Setup(Level.Trial)
    public void setup() throws java.io.IOException
    {
        final CounterRegistry registry;
        if ("file".equals(counters))
        {
            countersFile = CountersFile.create(CountersDirectory.resolve(null), "bench", "SwitchAggregationBenchmark",
                64);
            registry = countersFile.registry();
        }
        else
        {
            registry = new CounterRegistry(64);
        }
        softwareSwitch = new SoftwareSwitch(new DiscardTransport(65536), registry, 64);
        softwareSwitch.addJob(new SwitchJobConfig(1, WORKERS, SLOTS, LANES));
        softwareSwitch.doWork();
        length = InaggHeader.messageLength(LANES);
        packets = Arena.ofAuto().allocate((long)length * WORKERS, 64);
        final MemorySegment join = Arena.ofAuto().allocate(InaggHeader.LENGTH);
        for (int w = 0; w < WORKERS; w++)
        {
            InaggHeader.write(join, 0, MessageType.JOIN, 0, 1, w, 0, 0, WORKERS, 0, 0, InaggHeader.NO_EXPONENT, 0);
            softwareSwitch.onMessage(join, 0, InaggHeader.LENGTH, w);
            final long o = (long)w * length;
            InaggHeader.write(packets, o, MessageType.AGGREGATE, 0, 1, w, 0, 0, 0, LANES, 0, -3, 0);
            for (int i = 0; i < LANES; i++)
            {
                InaggHeader.setElement(packets, o, i, i * (w + 1));
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (countersFile != null)
        {
            countersFile.close();
        }
    }

    @Benchmark
    @OperationsPerInvocation(WORKERS)
    public void aggregateOneRoundPerInvocation()
    {
        final int slot = round % SLOTS;
        final int copy = (round / SLOTS) & 1;
        for (int w = 0; w < WORKERS; w++)
        {
            final long o = (long)w * length;
            InaggHeader.setSlotField(packets, o, slot, copy);
            InaggHeader.setSequence(packets, o, round);
            softwareSwitch.onMessage(packets, o, length, w);
        }
        round++;
    }
}
