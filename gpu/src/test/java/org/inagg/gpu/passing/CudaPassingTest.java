package org.inagg.gpu.passing;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.inagg.api.AllReduceJob;
import org.inagg.gpu.CpuReducer;
import org.inagg.gpu.CudaReducer;
import org.inagg.gpu.DeviceBuffer;
import org.inagg.gpu.Gradients;
import org.inagg.gpu.ReductionDevice;
import org.inagg.gpu.ReductionDevices;
import org.inagg.gpu.harness.Hosts;
import org.inagg.gpu.harness.InProcessFabric;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * PASSING with one CUDA device playing each host's 4 GPUs (gradients in device memory, lanes in pinned host memory)
 * against the flat all-reduce of the same gradients computed by the CPU path: bit-identical. Skipped, with the reason
 * printed, without a GPU (fails instead with -Dinagg.gpu.tests.require=true).
 */
@Timeout(120)
class CudaPassingTest
{
    private static final int HOSTS = 2;
    private static final int GPUS = 4;
    private static final int LANES = 256;

    @Test
    void shouldEqualTheFlatAllReduceBitForBitOnTheGpu()
    {
        final Optional<String> unavailable = ReductionDevices.cudaUnavailableReason();
        if (unavailable.isPresent())
        {
            System.out.println("[inagg-gpu] GPU PASSING test skipped: " + unavailable.get());
            if (Boolean.getBoolean("inagg.gpu.tests.require"))
            {
                throw new AssertionError("inagg.gpu.tests.require=true but " + unavailable.get());
            }
            Assumptions.abort(unavailable.get());
        }
        final int count = 1_000_000 + 37;
        final float[][][] x = new float[HOSTS][GPUS][];
        for (int h = 0; h < HOSTS; h++)
        {
            for (int g = 0; g < GPUS; g++)
            {
                x[h][g] = Gradients.random(h * GPUS + g, count, LANES);
            }
        }
        try (CudaReducer gpu = CudaReducer.open(0);
             InProcessFabric passingFabric = InProcessFabric.passing(HOSTS, GPUS, LANES, 2);
             InProcessFabric flatFabric = InProcessFabric.flat(HOSTS * GPUS, LANES, 2);
             Hosts hosts = new Hosts(HOSTS))
        {
            final List<List<DeviceBuffer>> onGpu = new ArrayList<>();
            final List<List<DeviceBuffer>> onCpu = new ArrayList<>();
            final PassingAllReduce[] passing = new PassingAllReduce[HOSTS];
            final PerGpuAllReduce[] flat = new PerGpuAllReduce[HOSTS];
            for (int h = 0; h < HOSTS; h++)
            {
                final List<ReductionDevice> gpus = new ArrayList<>();
                final List<ReductionDevice> cpus = new ArrayList<>();
                final List<AllReduceJob> chunkJobs = new ArrayList<>();
                final List<AllReduceJob> flatJobs = new ArrayList<>();
                final List<DeviceBuffer> g1 = new ArrayList<>();
                final List<DeviceBuffer> c1 = new ArrayList<>();
                for (int g = 0; g < GPUS; g++)
                {
                    gpus.add(gpu);
                    cpus.add(new CpuReducer());
                    chunkJobs.add(passingFabric.job(g, h));
                    flatJobs.add(flatFabric.job(0, h * GPUS + g));
                    final DeviceBuffer device = gpu.allocate(count * 4L);
                    gpu.copyFromHost(MemorySegment.ofArray(x[h][g]), device);
                    g1.add(device);
                    c1.add(Gradients.buffer(x[h][g]));
                }
                onGpu.add(g1);
                onCpu.add(c1);
                passing[h] = new PassingAllReduce(gpus, chunkJobs, LANES, PassingAllReduce.PIECE_BLOCKS_DEFAULT);
                flat[h] = new PerGpuAllReduce(cpus, flatJobs);
            }
            gpu.synchronize();
            hosts.run(h -> passing[h].allReduce(onGpu.get(h), count));
            hosts.run(h -> flat[h].allReduce(onCpu.get(h), count));
            final float[] expected = Gradients.floats(onCpu.get(0).get(0), count);
            for (int h = 0; h < HOSTS; h++)
            {
                for (int g = 0; g < GPUS; g++)
                {
                    final float[] actual = new float[count];
                    gpu.copyToHost(onGpu.get(h).get(g), MemorySegment.ofArray(actual));
                    gpu.synchronize();
                    Gradients.assertSameBits("host " + h + " gpu " + g, expected, actual, i -> inputs(x, i));
                }
            }
            for (int h = 0; h < HOSTS; h++)
            {
                passing[h].close();
                flat[h].close();
                onGpu.get(h).forEach(DeviceBuffer::close);
                onCpu.get(h).forEach(DeviceBuffer::close);
            }
        }
    }

    /** The H*G inputs of element i, for a mismatch's message. */
    private static String inputs(final float[][][] x, final int i)
    {
        final StringBuilder s = new StringBuilder(" from inputs");
        for (final float[][] host : x)
        {
            for (final float[] gpu : host)
            {
                s.append(' ').append(gpu[i]);
            }
        }
        final int block = i / LANES;
        float max = 0;
        for (final float[][] host : x)
        {
            for (final float[] gpu : host)
            {
                for (int j = block * LANES; j < Math.min(gpu.length, (block + 1) * LANES); j++)
                {
                    max = Math.max(max, Math.abs(gpu[j]));
                }
            }
        }
        return s.append(" (block ").append(block).append(", largest magnitude ").append(max).append(')').toString();
    }
}
