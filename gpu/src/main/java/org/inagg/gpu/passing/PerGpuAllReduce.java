package org.inagg.gpu.passing;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.inagg.api.AllReduceJob;
import org.inagg.api.ElementType;
import org.inagg.gpu.DeviceBuffer;
import org.inagg.gpu.ReductionDevice;

/**
 * The per-GPU in-network all-reduce PASSING is compared with: every GPU is a worker of one job of H*G workers, so the
 * switch aggregates H*G contributions per packet and every GPU's gradient crosses the host's link. Each gradient is
 * staged in pinned host memory (skipped where the device's memory is host memory already, as on the CPU reducer) and
 * all-reduced by the datapath's float path, which quantizes on the host CPU.
 */
public final class PerGpuAllReduce implements AutoCloseable
{
    private final List<ReductionDevice> devices;
    private final List<AllReduceJob> jobs;
    private final DeviceBuffer[] staging;

    /**
     * @param devices the host's G devices.
     * @param jobs    worker j of this host in the H*G-worker job, one per device.
     */
    public PerGpuAllReduce(final List<ReductionDevice> devices, final List<AllReduceJob> jobs)
    {
        if (devices.size() != jobs.size())
        {
            throw new IllegalArgumentException("need one job per device");
        }
        this.devices = List.copyOf(devices);
        this.jobs = List.copyOf(jobs);
        this.staging = new DeviceBuffer[devices.size()];
    }

    /** Replaces each gradient (gradient j on device j, {@code count} floats) with the sum over every GPU of every host. */
    public void allReduce(final List<DeviceBuffer> gradients, final long count)
    {
        final int g = devices.size();
        final MemorySegment[] host = new MemorySegment[g];
        final CompletableFuture<?>[] sent = new CompletableFuture<?>[g];
        for (int j = 0; j < g; j++)
        {
            final DeviceBuffer gradient = gradients.get(j);
            final MemorySegment direct = gradient.hostSegment().orElse(null);
            if (direct != null)
            {
                host[j] = direct.asSlice(0, count * Float.BYTES);
            }
            else
            {
                final DeviceBuffer stage = stagingFor(j, count);
                devices.get(j).copy(gradient, stage, count * Float.BYTES);
                devices.get(j).fence().await();
                host[j] = stage.hostSegment().orElseThrow().asSlice(0, count * Float.BYTES);
            }
            sent[j] = jobs.get(j).allReduceAsync(host[j], host[j], ElementType.FLOAT32);
        }
        Futures.join(CompletableFuture.allOf(sent));
        for (int j = 0; j < g; j++)
        {
            if (gradients.get(j).hostSegment().isEmpty())
            {
                devices.get(j).copy(staging[j], gradients.get(j), count * Float.BYTES);
            }
        }
        for (final ReductionDevice device : devices)
        {
            device.synchronize();
        }
    }

    private DeviceBuffer stagingFor(final int j, final long count)
    {
        if (staging[j] == null || staging[j].byteSize() < count * Float.BYTES)
        {
            if (staging[j] != null)
            {
                staging[j].close();
            }
            staging[j] = devices.get(j).allocateHost(count * Float.BYTES);
        }
        return staging[j];
    }

    @Override
    public void close()
    {
        for (int j = 0; j < staging.length; j++)
        {
            if (staging[j] != null)
            {
                staging[j].close();
                staging[j] = null;
            }
        }
    }
}
