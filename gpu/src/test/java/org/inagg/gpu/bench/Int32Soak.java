package org.inagg.gpu.bench;

import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

import org.inagg.gpu.harness.Hosts;
import org.inagg.gpu.harness.InProcessFabric;

/**
 * Datapath soak without any gpu code: 2 workers x 4 jobs of in-place int32 all-reduces whose sizes alternate
 * (1024 ints, 1024 ints, then 16 ops of 16384 ints), the pattern PASSING produces; checks every sum. It found the
 * switch's multicast bug (results copied out of an already committed message), since fixed in the switch.
 * Usage: Int32Soak [seconds]
 */
public final class Int32Soak
{
    private Int32Soak()
    {
    }

    public static void main(final String[] args)
    {
        final int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        final int workers = 2;
        final int jobs = Integer.getInteger("soak.jobs", 4);
        final int[] sizes = new int[18];
        sizes[0] = 1024;
        sizes[1] = 1024;
        for (int i = 2; i < sizes.length; i++)
        {
            sizes[i] = 16384;
        }
        try (InProcessFabric fabric = InProcessFabric.passing(workers, jobs, 256, 2); Hosts hosts = new Hosts(workers))
        {
            final long end = System.nanoTime() + seconds * 1_000_000_000L;
            long rounds = 0;
            while (System.nanoTime() < end)
            {
                final long round = rounds++;
                final int[][][][] data = new int[workers][jobs][sizes.length][];
                hosts.run(w ->
                {
                    for (int op = 0; op < sizes.length; op++)
                    {
                        final CompletableFuture<?>[] f = new CompletableFuture<?>[jobs];
                        for (int j = 0; j < jobs; j++)
                        {
                            final SplittableRandom random = new SplittableRandom(round * 1_000_003 + op * 31 + j * 7 + w);
                            final int[] x = new int[sizes[op]];
                            for (int i = 0; i < x.length; i++)
                            {
                                x[i] = random.nextInt(1 << 20);
                            }
                            if (Boolean.getBoolean("soak.floats"))
                            {
                                // Integers below 2^20 as floats: quantization and the 2-worker sum are exact.
                                final float[] fx = new float[x.length];
                                final float[] fy = new float[x.length];
                                for (int i = 0; i < x.length; i++)
                                {
                                    fx[i] = x[i];
                                }
                                final int[] y = new int[x.length];
                                data[w][j][op] = y;
                                f[j] = fabric.job(j, w).allReduceAsync(fx, fy).thenRun(() ->
                                {
                                    for (int i = 0; i < y.length; i++)
                                    {
                                        y[i] = (int)fy[i];
                                    }
                                });
                            }
                            else if (Boolean.getBoolean("soak.outOfPlace"))
                            {
                                final int[] y = new int[x.length];
                                data[w][j][op] = y;
                                f[j] = fabric.job(j, w).allReduceAsync(x, y);
                            }
                            else
                            {
                                data[w][j][op] = x;
                                f[j] = fabric.job(j, w).allReduceAsync(x);
                            }
                        }
                        if (Boolean.getBoolean("soak.sequential") || op < 2 || op == sizes.length - 1)
                        {
                            CompletableFuture.allOf(f).join();
                        }
                    }
                });
                for (int j = 0; j < jobs; j++)
                {
                    for (int op = 0; op < sizes.length; op++)
                    {
                        final int[] expected = new int[sizes[op]];
                        for (int w = 0; w < workers; w++)
                        {
                            final SplittableRandom random = new SplittableRandom(round * 1_000_003 + op * 31 + j * 7 + w);
                            for (int i = 0; i < expected.length; i++)
                            {
                                expected[i] += random.nextInt(1 << 20);
                            }
                        }
                        for (int w = 0; w < workers; w++)
                        {
                            if (!java.util.Arrays.equals(expected, data[w][j][op]))
                            {
                                int i = 0;
                                while (expected[i] == data[w][j][op][i])
                                {
                                    i++;
                                }
                                System.out.println("WRONG SUM: round " + round + " job " + j + " op " + op + " worker " + w
                                    + " first bad index " + i + " (packet " + i / 256 + "): expected " + expected[i]
                                    + " got " + data[w][j][op][i]);
                                for (final org.inagg.p4.softswitch.SwitchCounter c
                                    : org.inagg.p4.softswitch.SwitchCounter.values())
                                {
                                    System.out.println("  switch " + c.label() + ": " + fabric.switchCounter(c));
                                }
                                for (int jj = 0; jj < jobs; jj++)
                                {
                                    for (int ww = 0; ww < workers; ww++)
                                    {
                                        final StringBuilder line = new StringBuilder("  job " + jj + " worker " + ww + ":");
                                        for (final org.inagg.protocol.WorkerCounter c
                                            : org.inagg.protocol.WorkerCounter.values())
                                        {
                                            line.append(' ').append(c.name()).append('=')
                                                .append(fabric.job(jj, ww).counter(c));
                                        }
                                        System.out.println(line);
                                    }
                                }
                                System.exit(1);
                            }
                        }
                    }
                }
            }
            System.out.println("int32 soak: " + rounds + " rounds of " + sizes.length + " ops x " + jobs
                + " jobs, every sum right");
        }
    }
}
