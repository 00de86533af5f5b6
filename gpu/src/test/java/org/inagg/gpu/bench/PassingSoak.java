package org.inagg.gpu.bench;

import java.util.ArrayList;
import java.util.List;

import org.inagg.api.AllReduceJob;
import org.inagg.gpu.CpuReducer;
import org.inagg.gpu.DeviceBuffer;
import org.inagg.gpu.Gradients;
import org.inagg.gpu.ReductionDevice;
import org.inagg.gpu.harness.Hosts;
import org.inagg.gpu.harness.InProcessFabric;
import org.inagg.gpu.passing.PassingAllReduce;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.protocol.WorkerCounter;

/**
 * Repeats PASSING all-reduces (2 hosts x 4 logical GPUs, in-process) for a while and, on failure, prints the switch's
 * and workers' counters: a soak test for the protocol under the PASSING pattern of operations.
 * Usage: PassingSoak [seconds] [elements]
 */
public final class PassingSoak
{
    private PassingSoak()
    {
    }

    public static void main(final String[] args)
    {
        final int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        final int elements = args.length > 1 ? Integer.parseInt(args[1]) : 1 << 20;
        final int hostsCount = 2;
        final int gpus = 4;
        try (InProcessFabric fabric = InProcessFabric.passing(hostsCount, gpus, 256, 2);
             Hosts hosts = new Hosts(hostsCount))
        {
            final PassingAllReduce[] passing = new PassingAllReduce[hostsCount];
            final List<List<DeviceBuffer>> gradients = new ArrayList<>();
            for (int h = 0; h < hostsCount; h++)
            {
                final List<ReductionDevice> devices = new ArrayList<>();
                final List<AllReduceJob> jobs = new ArrayList<>();
                final List<DeviceBuffer> perHost = new ArrayList<>();
                for (int g = 0; g < gpus; g++)
                {
                    devices.add(new CpuReducer());
                    jobs.add(fabric.job(g, h));
                    perHost.add(Gradients.buffer(Gradients.random(h * gpus + g, elements, 256)));
                }
                gradients.add(perHost);
                passing[h] = new PassingAllReduce(devices, jobs, 256, PassingAllReduce.PIECE_BLOCKS_DEFAULT);
            }
            final long end = System.nanoTime() + seconds * 1_000_000_000L;
            int done = 0;
            try
            {
                while (System.nanoTime() < end)
                {
                    hosts.run(h -> passing[h].allReduce(gradients.get(h), elements));
                    done++;
                    // The sum of 8 gradients: divide by 8 (exact) so repeated in-place sums stay finite.
                    for (final List<DeviceBuffer> host : gradients)
                    {
                        for (final DeviceBuffer g : host)
                        {
                            final var s = g.hostSegment().orElseThrow();
                            for (long i = 0; i < elements; i++)
                            {
                                s.setAtIndex(Gradients.FLOAT, i, Math.scalb(s.getAtIndex(Gradients.FLOAT, i), -3));
                            }
                        }
                    }
                }
                System.out.println("PASSING soak: " + done + " all-reduces of " + elements + " floats, no failure");
            }
            catch (final RuntimeException ex)
            {
                System.out.println("PASSING soak failed after " + done + " all-reduces: " + ex);
                for (final Throwable other : ex.getSuppressed())
                {
                    System.out.println("  also: " + other);
                    other.printStackTrace(System.out);
                }
                for (final SwitchCounter c : SwitchCounter.values())
                {
                    System.out.println("  switch " + c.label() + ": " + fabric.switchCounter(c));
                }
                for (int g = 0; g < gpus; g++)
                {
                    for (int h = 0; h < hostsCount; h++)
                    {
                        final StringBuilder line = new StringBuilder("  job " + fabric.jobId(g) + " worker " + h + ":");
                        for (final WorkerCounter c : WorkerCounter.values())
                        {
                            line.append(' ').append(c.name()).append('=').append(fabric.job(g, h).counter(c));
                        }
                        System.out.println(line);
                    }
                }
                System.exit(1);
            }
        }
    }
}
