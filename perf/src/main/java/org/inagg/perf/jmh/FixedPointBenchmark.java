package org.inagg.perf.jmh;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.fixedpoint.ScalarFixedPointConverter;
import org.inagg.fixedpoint.VectorFixedPointConverter;
import org.inagg.wire.InaggHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Quantize and dequantize a tensor packet by packet (256 lanes each, written big-endian into packet-sized slots), next
 * to plain memory copies of the same bytes between the same kinds of memory in the same run: ops/s times
 * {@code elements * 4} bytes is GB/s, and the ratio to {@link #copy()} is the figure to watch.
 * <p>
 * {@code tensor=heap} is what the send and receive paths see when a training loop hands in a {@code float[]}
 * ({@code AllReduceJob.allReduce(float[])} wraps it with {@code MemorySegment.ofArray}); packets are always in native
 * memory, as every transport's frames are. {@code tensor=native} is an off-heap tensor (a {@code MemorySegment} or a
 * direct buffer). {@link #copy()} moves the whole tensor in one {@code MemorySegment.copy} (tensor to packets, the
 * quantize direction), {@link #copyBack()} the other way (the dequantize direction), {@link #copyPerPacket()} one
 * packet's 1 KiB at a time, as quantize walks it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class FixedPointBenchmark
{
    private static final int LANES = 256;

    @Param({"262144"})
    public int elements;

    @Param({"vector", "scalar"})
    public String converter;

    @Param({"heap", "native"})
    public String tensor;

    private FixedPointConverter impl;
    private MemorySegment floats;
    private MemorySegment lanes;
    private MemorySegment out;
    private int shift;
    private float[] array;
    private float[] outArray;

    @Setup
    public void setup()
    {
        impl = "vector".equals(converter) ? new VectorFixedPointConverter() : new ScalarFixedPointConverter();
        final Arena arena = Arena.ofAuto();
        final boolean heap = "heap".equals(tensor);
        floats = heap ? MemorySegment.ofArray(new float[elements]) : arena.allocate((long)elements * Float.BYTES, 64);
        lanes = arena.allocate((long)elements * Integer.BYTES, 64);
        out = heap ? MemorySegment.ofArray(new float[elements]) : arena.allocate((long)elements * Float.BYTES, 64);
        final SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < elements; i++)
        {
            floats.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float)random.nextGaussian());
        }
        array = floats.toArray(ValueLayout.JAVA_FLOAT);
        outArray = new float[elements];
        shift = FixedPoint.shift(impl.blockExponent(floats, 0, elements), 4);
        impl.quantize(floats, 0, elements, shift, lanes, 0);
    }

    @Benchmark
    public MemorySegment copy()
    {
        MemorySegment.copy(floats, 0, lanes, 0, (long)elements * Float.BYTES);
        return lanes;
    }

    @Benchmark
    public MemorySegment copyBack()
    {
        MemorySegment.copy(lanes, 0, out, 0, (long)elements * Float.BYTES);
        return out;
    }

    @Benchmark
    public MemorySegment copyPerPacket()
    {
        for (int b = 0; b < elements; b += LANES)
        {
            MemorySegment.copy(floats, (long)b * Float.BYTES, lanes, (long)b * Integer.BYTES, (long)LANES * Float.BYTES);
        }
        return lanes;
    }

    @Benchmark
    public MemorySegment quantize()
    {
        for (int b = 0; b < elements; b += LANES)
        {
            impl.quantize(floats, (long)b * Float.BYTES, LANES, shift, lanes, (long)b * Integer.BYTES);
        }
        return lanes;
    }

    @Benchmark
    public MemorySegment dequantize()
    {
        for (int b = 0; b < elements; b += LANES)
        {
            impl.dequantize(lanes, (long)b * Integer.BYTES, LANES, shift, out, (long)b * Float.BYTES);
        }
        return out;
    }

    @Benchmark
    public int blockExponents()
    {
        int max = 0;
        for (int b = 0; b < elements; b += LANES)
        {
            max = Math.max(max, impl.blockExponent(floats, (long)b * Float.BYTES, LANES));
        }
        return max;
    }

    /** The worker's path for a {@code float[]} tensor: the array entry points (the {@code tensor} parameter is moot). */
    @Benchmark
    public int blockExponentsArray()
    {
        int max = 0;
        for (int b = 0; b < elements; b += LANES)
        {
            max = Math.max(max, impl.blockExponent(array, b, LANES));
        }
        return max;
    }

    @Benchmark
    public MemorySegment quantizeArray()
    {
        for (int b = 0; b < elements; b += LANES)
        {
            impl.quantize(array, b, LANES, shift, lanes, (long)b * Integer.BYTES);
        }
        return lanes;
    }

    @Benchmark
    public float[] dequantizeArray()
    {
        for (int b = 0; b < elements; b += LANES)
        {
            impl.dequantize(lanes, (long)b * Integer.BYTES, LANES, shift, outArray, b);
        }
        return outArray;
    }

    /**
     * Quantize and dequantize of each packet in one method, as a worker's send and receive paths share one JVM: a
     * kernel that runs fast alone can slow its neighbour once both are compiled in one process. Compare it with the
     * two copies' times added: {@code 1 / (1 / copy + 1 / copyBack)}.
     */
    @Benchmark
    public float[] roundTripArray()
    {
        for (int b = 0; b < elements; b += LANES)
        {
            impl.quantize(array, b, LANES, shift, lanes, (long)b * Integer.BYTES);
            impl.dequantize(lanes, (long)b * Integer.BYTES, LANES, shift, outArray, b);
        }
        return outArray;
    }

    /** Unused by the benchmarks; keeps the header length in view: a packet is 20 bytes plus 4 per lane. */
    static int packetBytes()
    {
        return InaggHeader.messageLength(LANES);
    }
}
