package org.inagg.gpu.bench;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.gpu.BlockScaling;
import org.inagg.gpu.CpuReducer;
import org.inagg.gpu.DeviceBuffer;
import org.inagg.gpu.Gradients;
import org.inagg.gpu.HostMemoryBuffer;
import org.inagg.gpu.LaneOrder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The CPU reducer's operations on one thread, next to a plain copy of the same bytes in the same run (the memory
 * bandwidth ceiling). {@link GpuBenchmarks} converts ops/s to GB/s of input read: {@code 4 * elements} bytes per
 * operation, {@code 4 * elements * SOURCES} for the k-way ones.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class CpuReducerBenchmark
{
    public static final int SOURCES = 4;
    private static final int BLOCK = 256;

    @Param({"1048576", "16777216"})
    public int elements;

    private final CpuReducer cpu = new CpuReducer();
    private final List<DeviceBuffer> sources = new ArrayList<>();
    private HostMemoryBuffer copy;
    private HostMemoryBuffer lanes;
    private HostMemoryBuffer out;
    private HostMemoryBuffer exponents;
    private BlockScaling scaling;

    @Setup(Level.Trial)
    public void setUp()
    {
        for (int j = 0; j < SOURCES; j++)
        {
            sources.add(Gradients.buffer(Gradients.random(j, elements, BLOCK)));
        }
        copy = HostMemoryBuffer.allocate(elements * 4L);
        lanes = HostMemoryBuffer.allocate(elements * 4L);
        out = HostMemoryBuffer.allocate(elements * 4L);
        exponents = HostMemoryBuffer.allocate((elements / BLOCK + 1) * 4L);
        cpu.blockExponents(sources.get(0), elements, BLOCK, exponents);
        scaling = new BlockScaling(exponents, BLOCK, 8);
        cpu.quantize(sources.get(0), elements, scaling, LaneOrder.NETWORK, lanes);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        sources.forEach(DeviceBuffer::close);
        copy.close();
        lanes.close();
        out.close();
        exponents.close();
    }

    @Benchmark
    public void copy()
    {
        MemorySegment.copy(((HostMemoryBuffer)sources.get(0)).segment(), 0, copy.segment(), 0, elements * 4L);
    }

    @Benchmark
    public void blockExponents()
    {
        cpu.blockExponents(sources.get(0), elements, BLOCK, exponents);
    }

    @Benchmark
    public void quantizeNetwork()
    {
        cpu.quantize(sources.get(0), elements, scaling, LaneOrder.NETWORK, lanes);
    }

    @Benchmark
    public void quantizeNative()
    {
        cpu.quantize(sources.get(0), elements, scaling, LaneOrder.NATIVE, out);
    }

    @Benchmark
    public void dequantizeNetwork()
    {
        cpu.dequantize(lanes, elements, scaling, LaneOrder.NETWORK, out);
    }

    @Benchmark
    public void sumFloatsK()
    {
        cpu.sumFloats(sources, elements, out);
    }

    @Benchmark
    public void reduceAndQuantizeK()
    {
        cpu.reduceAndQuantize(sources, elements, scaling, LaneOrder.NATIVE, out);
    }
}
