package org.inagg.gpu.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.gpu.BlockScaling;
import org.inagg.gpu.CudaReducer;
import org.inagg.gpu.DeviceBuffer;
import org.inagg.gpu.Gradients;
import org.inagg.gpu.HostMemoryBuffer;
import org.inagg.gpu.LaneOrder;
import org.inagg.gpu.ReductionDevices;
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
 * The CUDA kernels on device memory, each operation launched and waited for (cuStreamSynchronize), next to a
 * device-to-device copy of the same bytes in the same run. Fails its setup, naming the reason, without a usable GPU;
 * {@link GpuBenchmarks} runs it only with {@code --gpu}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class CudaKernelBenchmark
{
    public static final int SOURCES = 4;
    private static final int BLOCK = 256;

    @Param({"16777216"})
    public int elements;

    private CudaReducer gpu;
    private final List<DeviceBuffer> sources = new ArrayList<>();
    private DeviceBuffer copy;
    private DeviceBuffer lanes;
    private DeviceBuffer out;
    private DeviceBuffer exponents;
    private BlockScaling scaling;

    @Setup(Level.Trial)
    public void setUp()
    {
        ReductionDevices.cudaUnavailableReason().ifPresent(reason ->
        {
            throw new IllegalStateException("CUDA kernel benchmarks need a GPU: " + reason);
        });
        gpu = CudaReducer.open(0);
        for (int j = 0; j < SOURCES; j++)
        {
            final DeviceBuffer device = gpu.allocate(elements * 4L);
            try (HostMemoryBuffer host = Gradients.buffer(Gradients.random(j, elements, BLOCK)))
            {
                gpu.copyFromHost(host.segment(), device);
                gpu.synchronize();
            }
            sources.add(device);
        }
        copy = gpu.allocate(elements * 4L);
        lanes = gpu.allocate(elements * 4L);
        out = gpu.allocate(elements * 4L);
        exponents = gpu.allocate((elements / BLOCK + 1) * 4L);
        gpu.blockExponents(sources.get(0), elements, BLOCK, exponents);
        scaling = new BlockScaling(exponents, BLOCK, 8);
        gpu.quantize(sources.get(0), elements, scaling, LaneOrder.NETWORK, lanes);
        gpu.synchronize();
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (gpu != null)
        {
            sources.forEach(DeviceBuffer::close);
            copy.close();
            lanes.close();
            out.close();
            exponents.close();
            gpu.close();
        }
    }

    @Benchmark
    public void copy()
    {
        gpu.copy(sources.get(0), copy, elements * 4L);
        gpu.synchronize();
    }

    @Benchmark
    public void blockExponents()
    {
        gpu.blockExponents(sources.get(0), elements, BLOCK, exponents);
        gpu.synchronize();
    }

    @Benchmark
    public void quantizeNetwork()
    {
        gpu.quantize(sources.get(0), elements, scaling, LaneOrder.NETWORK, lanes);
        gpu.synchronize();
    }

    @Benchmark
    public void dequantizeNetwork()
    {
        gpu.dequantize(lanes, elements, scaling, LaneOrder.NETWORK, out);
        gpu.synchronize();
    }

    @Benchmark
    public void sumFloatsK()
    {
        gpu.sumFloats(sources, elements, out);
        gpu.synchronize();
    }

    @Benchmark
    public void reduceAndQuantizeK()
    {
        gpu.reduceAndQuantize(sources, elements, scaling, LaneOrder.NATIVE, out);
        gpu.synchronize();
    }
}
