package org.inagg.perf.jmh;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Header encode and decode per packet, in place in off-heap memory. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class CodecBenchmark
{
    private MemorySegment packet;
    private int sequence;

    @Setup
    public void setup()
    {
        packet = Arena.ofAuto().allocate(InaggHeader.messageLength(256), 64);
        InaggHeader.write(packet, 0, MessageType.AGGREGATE, 0, 7, 3, 5, 1, 1234, 256, -4, -3, 0);
    }

    @Benchmark
    public void encodeHeader()
    {
        InaggHeader.write(packet, 0, MessageType.AGGREGATE, 0, 7, 3, 5, sequence & 1, sequence++, 256, -4, -3, 0);
    }

    @Benchmark
    public long decodeHeader()
    {
        return InaggHeader.check(packet, 0, InaggHeader.messageLength(256)) + InaggHeader.type(packet, 0)
            + InaggHeader.flags(packet, 0) + InaggHeader.jobId(packet, 0) + InaggHeader.workerId(packet, 0)
            + InaggHeader.slotIndex(packet, 0) + InaggHeader.shadowCopy(packet, 0) + InaggHeader.sequence(packet, 0)
            + InaggHeader.elementCount(packet, 0) + InaggHeader.blockExponent(packet, 0)
            + InaggHeader.nextExponent(packet, 0);
    }
}
