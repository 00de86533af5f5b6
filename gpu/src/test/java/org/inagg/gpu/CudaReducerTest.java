package org.inagg.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The CUDA kernels against the CPU reducer, bit for bit. Skipped, with the reason printed, where no CUDA device can be
 * used; with -Dinagg.gpu.tests.require=true (CI on a GPU machine) a missing GPU fails instead.
 */
class CudaReducerTest
{
    private static final int BLOCK = 256;
    private static CudaReducer gpu;
    private static String skipReason;
    private static final CpuReducer CPU = new CpuReducer();

    @BeforeAll
    static void openGpu()
    {
        final Optional<String> unavailable = ReductionDevices.cudaUnavailableReason();
        if (unavailable.isPresent())
        {
            final String reason = "GPU tests skipped: " + unavailable.get();
            System.out.println("[inagg-gpu] " + reason);
            if (Boolean.getBoolean("inagg.gpu.tests.require"))
            {
                throw new AssertionError("inagg.gpu.tests.require=true but " + reason);
            }
            skipReason = reason;
            return;
        }
        gpu = CudaReducer.open(0);
        System.out.println("[inagg-gpu] GPU tests on " + gpu.describe());
    }

    @BeforeEach
    void skipWithoutGpu()
    {
        Assumptions.assumeTrue(skipReason == null, () -> skipReason);
    }

    @AfterAll
    static void closeGpu()
    {
        if (gpu != null)
        {
            gpu.close();
        }
    }

    @Test
    void shouldMatchTheCpuReducerBitForBitOnEveryOperation()
    {
        for (final int count : new int[] {1, 255, 256, 257, 100_000, 1_000_003})
        {
            for (final int workers : new int[] {1, 8, 1000})
            {
                compare(count, workers);
            }
        }
    }

    private static void compare(final int count, final int workers)
    {
        final int k = 4;
        final int blocks = (count + BLOCK - 1) / BLOCK;
        final List<AutoCloseable> owned = new ArrayList<>();
        try
        {
            final List<DeviceBuffer> cpuSources = new ArrayList<>();
            final List<DeviceBuffer> gpuSources = new ArrayList<>();
            for (int j = 0; j < k; j++)
            {
                final HostMemoryBuffer host = Gradients.buffer(Gradients.random(count * 31L + j, count, BLOCK));
                final DeviceBuffer device = gpu.allocate(count * 4L);
                gpu.copyFromHost(host.segment(), device);
                owned.add(host);
                owned.add(device);
                cpuSources.add(host);
                gpuSources.add(device);
            }
            final HostMemoryBuffer cpuExp = HostMemoryBuffer.allocate(blocks * 4L);
            final DeviceBuffer gpuExp = gpu.allocateHost(blocks * 4L);
            owned.add(cpuExp);
            owned.add(gpuExp);
            CPU.blockExponents(cpuSources.get(0), count, BLOCK, cpuExp);
            gpu.blockExponents(gpuSources.get(0), count, BLOCK, gpuExp);
            gpu.synchronize();
            assertThat(Gradients.intsOf(gpuExp, blocks)).as("block exponents").isEqualTo(Gradients.intsOf(cpuExp, blocks));

            final List<DeviceBuffer> cpuAll = new ArrayList<>();
            final List<DeviceBuffer> gpuAll = new ArrayList<>();
            for (int j = 0; j < k; j++)
            {
                final HostMemoryBuffer c = HostMemoryBuffer.allocate(blocks * 4L);
                final DeviceBuffer d = gpu.allocate(blocks * 4L);
                owned.add(c);
                owned.add(d);
                CPU.blockExponents(cpuSources.get(j), count, BLOCK, c);
                gpu.blockExponents(gpuSources.get(j), count, BLOCK, d);
                cpuAll.add(c);
                gpuAll.add(d);
            }
            CPU.maxExponents(cpuAll, blocks, cpuExp);
            gpu.maxExponents(gpuAll, blocks, gpuExp);
            gpu.synchronize();
            assertThat(Gradients.intsOf(gpuExp, blocks)).as("max exponents").isEqualTo(Gradients.intsOf(cpuExp, blocks));

            final BlockScaling cpuScaling = new BlockScaling(cpuExp, BLOCK, workers);
            final BlockScaling gpuScaling = new BlockScaling(gpuExp, BLOCK, workers);
            final DeviceBuffer gpuOut = gpu.allocateHost(count * 4L);
            final DeviceBuffer gpuOut2 = gpu.allocateHost(count * 4L);
            final HostMemoryBuffer cpuOut = HostMemoryBuffer.allocate(count * 4L);
            final HostMemoryBuffer cpuOut2 = HostMemoryBuffer.allocate(count * 4L);
            owned.addAll(List.of(gpuOut, gpuOut2, cpuOut, cpuOut2));
            for (final LaneOrder order : LaneOrder.values())
            {
                CPU.quantize(cpuSources.get(1), count, cpuScaling, order, cpuOut);
                gpu.quantize(gpuSources.get(1), count, gpuScaling, order, gpuOut);
                gpu.synchronize();
                assertThat(Gradients.intsOf(gpuOut, count)).as("quantize %s", order).isEqualTo(Gradients.intsOf(cpuOut, count));

                CPU.dequantize(cpuOut, count, cpuScaling, order, cpuOut2);
                gpu.dequantize(gpuOut, count, gpuScaling, order, gpuOut2);
                gpu.synchronize();
                assertThat(Gradients.intsOf(gpuOut2, count)).as("dequantize %s", order).isEqualTo(Gradients.intsOf(cpuOut2, count));

                CPU.reduceAndQuantize(cpuSources, count, cpuScaling, order, cpuOut);
                gpu.reduceAndQuantize(gpuSources, count, gpuScaling, order, gpuOut);
                gpu.synchronize();
                assertThat(Gradients.intsOf(gpuOut, count)).as("reduceAndQuantize %s", order).isEqualTo(Gradients.intsOf(cpuOut, count));
            }
            CPU.sumFloats(cpuSources, count, cpuOut);
            gpu.sumFloats(gpuSources, count, gpuOut);
            gpu.synchronize();
            assertThat(Gradients.intsOf(gpuOut, count)).as("sumFloats").isEqualTo(Gradients.intsOf(cpuOut, count));
            CPU.sumInts(cpuSources, count, cpuOut);
            gpu.sumInts(gpuSources, count, gpuOut);
            gpu.synchronize();
            assertThat(Gradients.intsOf(gpuOut, count)).as("sumInts").isEqualTo(Gradients.intsOf(cpuOut, count));
        }
        finally
        {
            for (int i = owned.size() - 1; i >= 0; i--)
            {
                try
                {
                    owned.get(i).close();
                }
                catch (final Exception ex)
                {
                    throw new RuntimeException(ex);
                }
            }
        }
    }

    @Test
    void shouldExposePinnedHostMemoryAsASegment()
    {
        try (DeviceBuffer pinned = gpu.allocateHost(1 << 20); DeviceBuffer device = gpu.allocate(1 << 20))
        {
            final var segment = pinned.hostSegment().orElseThrow();
            assertThat(segment.byteSize()).isEqualTo(1 << 20);
            segment.setAtIndex(Gradients.INT, 12345, 0x1234_5678);
            gpu.copy(pinned, device, 1 << 20);
            // The copy is asynchronous (DMA from pinned memory): wait before overwriting its source.
            gpu.fence().await();
            segment.setAtIndex(Gradients.INT, 12345, 0);
            gpu.copy(device, pinned, 1 << 20);
            gpu.fence().await();
            assertThat(segment.getAtIndex(Gradients.INT, 12345)).isEqualTo(0x1234_5678);
        }
    }
}
