package org.inagg.gpu.passing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.inagg.InvalidTensorException;
import org.inagg.api.AllReduceJob;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.ScalarFixedPointConverter;
import org.inagg.gpu.CpuReducer;
import org.inagg.gpu.DeviceBuffer;
import org.inagg.gpu.Gradients;
import org.inagg.gpu.HostMemoryBuffer;
import org.inagg.gpu.ReductionDevice;
import org.inagg.gpu.harness.Hosts;
import org.inagg.gpu.harness.InProcessFabric;
import org.inagg.p4.softswitch.SwitchCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * PASSING over 2 hosts of 4 logical GPUs (the CPU reducer plays them) on the in-process transport, against the flat
 * per-GPU in-network all-reduce of the same 8 gradients: bit-identical floats, and within the fixed-point bound of the
 * exact sum.
 */
@Timeout(60)
class PassingAllReduceTest
{
    private static final int HOSTS = 2;
    private static final int GPUS = 4;
    private static final int LANES = 256;

    private static InProcessFabric passingFabric;
    private static InProcessFabric flatFabric;
    private static Hosts hosts;
    private static PassingAllReduce[] passing;
    private static PerGpuAllReduce[] perGpu;

    @BeforeAll
    static void start()
    {
        passingFabric = InProcessFabric.passing(HOSTS, GPUS, LANES, 2);
        flatFabric = InProcessFabric.flat(HOSTS * GPUS, LANES, 1);
        hosts = new Hosts(HOSTS);
        passing = new PassingAllReduce[HOSTS];
        perGpu = new PerGpuAllReduce[HOSTS];
        for (int h = 0; h < HOSTS; h++)
        {
            final List<ReductionDevice> devices = new ArrayList<>();
            final List<AllReduceJob> chunkJobs = new ArrayList<>();
            final List<AllReduceJob> flatJobs = new ArrayList<>();
            for (int g = 0; g < GPUS; g++)
            {
                devices.add(new CpuReducer());
                chunkJobs.add(passingFabric.job(g, h));
                flatJobs.add(flatFabric.job(0, h * GPUS + g));
            }
            passing[h] = new PassingAllReduce(devices, chunkJobs, LANES, 8);
            perGpu[h] = new PerGpuAllReduce(devices, flatJobs);
        }
    }

    @AfterAll
    static void stop()
    {
        for (int h = 0; h < HOSTS; h++)
        {
            passing[h].close();
            perGpu[h].close();
        }
        hosts.close();
        passingFabric.close();
        flatFabric.close();
    }

    @Test
    void shouldEqualTheFlatAllReduceBitForBitAndStayWithinTheBound()
    {
        checkAgainstFlat(1, 100_000);
    }

    @Test
    void shouldShowTheSwitchHostsNotGpus()
    {
        final int count = 64 * LANES * GPUS + 100;
        final long passingBefore = passingFabric.switchCounter(SwitchCounter.CONTRIBUTIONS);
        final long flatBefore = flatFabric.switchCounter(SwitchCounter.CONTRIBUTIONS);
        checkAgainstFlat(8, count);
        final long passingContributions = passingFabric.switchCounter(SwitchCounter.CONTRIBUTIONS) - passingBefore;
        final long flatContributions = flatFabric.switchCounter(SwitchCounter.CONTRIBUTIONS) - flatBefore;

        final long blocks = (count + LANES - 1) / LANES;
        long expectedPassing = 0;
        for (int c = 0; c < GPUS; c++)
        {
            final long chunkBlocks = blocks * (c + 1) / GPUS - blocks * c / GPUS;
            final long exponentPackets = (chunkBlocks * new ExponentAgreement(HOSTS).intsPerBlock() + LANES - 1) / LANES;
            expectedPassing += HOSTS * (chunkBlocks + 2 * exponentPackets);
        }
        // Flat: every GPU sends every block, plus one exponent-only packet per slot in use (128 slots).
        final long expectedFlat = (long)HOSTS * GPUS * (blocks + Math.min(128, blocks));
        assertThat(passingContributions).isEqualTo(expectedPassing);
        assertThat(flatContributions).isEqualTo(expectedFlat);
        System.out.printf("[inagg-gpu] switch contributions for %d floats, 2 hosts x 4 GPUs: PASSING %d, per-GPU %d%n",
            count, passingContributions, flatContributions);
    }

    @Test
    void shouldHandleRaggedTensorsAndChunksWithoutBlocks()
    {
        checkAgainstFlat(2, 300);      // 2 blocks for 4 chunks: two chunks are empty
        checkAgainstFlat(3, 1);
        checkAgainstFlat(4, 4 * LANES * 3 + 17);
    }

    @Test
    void shouldFailOnEveryHostForANonFiniteGradientAndStayUsable()
    {
        final float[][][] x = gradients(5, 5_000);
        x[1][2][4_321] = Float.NaN;
        final List<List<DeviceBuffer>> buffers = buffers(x);
        try
        {
            final List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            hosts.run(h ->
            {
                try
                {
                    passing[h].allReduce(buffers.get(h), 5_000);
                }
                catch (final InvalidTensorException ex)
                {
                    failures.add(ex);
                }
            });
            assertThat(failures).hasSize(HOSTS).allSatisfy(f -> assertThat(f).hasMessageContaining("NaN or an infinity"));
        }
        finally
        {
            close(buffers);
        }
        checkAgainstFlat(6, 10_000);
    }

    @Test
    void shouldNotBeBitIdenticalWhenFloatsAreSummedInHostBeforeQuantizing()
    {
        // Why the contract quantizes per GPU: float sums of the G gradients round differently.
        final float[][][] x = gradients(7, 4_096);
        final float[] inHost = new float[4_096];
        for (int i = 0; i < inHost.length; i++)
        {
            float sum = 0;
            for (int g = 0; g < GPUS; g++)
            {
                sum += x[0][g][i];
            }
            inHost[i] = sum;
        }
        final ScalarFixedPointConverter scalar = new ScalarFixedPointConverter();
        int differing = 0;
        for (int b = 0; b < inHost.length / LANES; b++)
        {
            int exponent = Integer.MIN_VALUE;
            for (int g = 0; g < GPUS; g++)
            {
                final HostMemoryBuffer one = Gradients.buffer(x[0][g]);
                exponent = Math.max(exponent, scalar.blockExponent(one.segment(), b * LANES * 4L, LANES));
                one.close();
            }
            final int shift = FixedPoint.shift(exponent, GPUS);
            for (int i = b * LANES; i < (b + 1) * LANES; i++)
            {
                long perGpu = 0;
                for (int g = 0; g < GPUS; g++)
                {
                    perGpu += quantize(x[0][g][i], shift);
                }
                if (quantize(inHost[i], shift) != perGpu)
                {
                    differing++;
                }
            }
        }
        assertThat(differing).isPositive();
    }

    private static long quantize(final float x, final int shift)
    {
        final float y = x * Math.scalb(1.0f, shift);
        final int t = (int)y;
        final float frac = y - (float)t;
        return frac >= 0.5f ? t + 1 : frac <= -0.5f ? t - 1 : t;
    }

    private void checkAgainstFlat(final long seed, final int count)
    {
        final float[][][] x = gradients(seed, count);
        final List<List<DeviceBuffer>> viaPassing = buffers(x);
        final List<List<DeviceBuffer>> viaFlat = buffers(x);
        try
        {
            hosts.run(h -> passing[h].allReduce(viaPassing.get(h), count));
            hosts.run(h -> perGpu[h].allReduce(viaFlat.get(h), count));

            final int[] flatBits = bits(Gradients.floats(viaFlat.get(0).get(0), count));
            for (int h = 0; h < HOSTS; h++)
            {
                for (int g = 0; g < GPUS; g++)
                {
                    assertThat(bits(Gradients.floats(viaPassing.get(h).get(g), count)))
                        .as("PASSING result of host %d gpu %d vs the flat all-reduce", h, g).isEqualTo(flatBits);
                    assertThat(bits(Gradients.floats(viaFlat.get(h).get(g), count))).isEqualTo(flatBits);
                }
            }
            final float[] result = Gradients.floats(viaPassing.get(0).get(0), count);
            final ScalarFixedPointConverter scalar = new ScalarFixedPointConverter();
            for (int b = 0; b * LANES < count; b++)
            {
                final int n = Math.min(LANES, count - b * LANES);
                int exponent = FixedPoint.MIN_EXPONENT;
                for (final float[][] host : x)
                {
                    for (final float[] gpu : host)
                    {
                        try (HostMemoryBuffer one = Gradients.buffer(gpu))
                        {
                            exponent = Math.max(exponent, scalar.blockExponent(one.segment(), b * LANES * 4L, n));
                        }
                    }
                }
                for (int i = b * LANES; i < b * LANES + n; i++)
                {
                    double exact = 0;
                    for (final float[][] host : x)
                    {
                        for (final float[] gpu : host)
                        {
                            exact += gpu[i];
                        }
                    }
                    assertThat(Math.abs(result[i] - exact))
                        .as("element %d", i)
                        .isLessThanOrEqualTo(FixedPoint.sumErrorBound(exponent, HOSTS * GPUS, result[i]));
                }
            }
        }
        finally
        {
            close(viaPassing);
            close(viaFlat);
        }
    }

    /** x[h][g]: host h, GPU g; hosts get different magnitudes per block so the agreed exponent comes from either. */
    private static float[][][] gradients(final long seed, final int count)
    {
        final float[][][] x = new float[HOSTS][GPUS][];
        for (int h = 0; h < HOSTS; h++)
        {
            for (int g = 0; g < GPUS; g++)
            {
                x[h][g] = Gradients.random(seed * 1000 + h * GPUS + g, count, LANES);
            }
        }
        return x;
    }

    private static List<List<DeviceBuffer>> buffers(final float[][][] x)
    {
        final List<List<DeviceBuffer>> buffers = new ArrayList<>();
        for (final float[][] host : x)
        {
            final List<DeviceBuffer> perHost = new ArrayList<>();
            for (final float[] gpu : host)
            {
                perHost.add(Gradients.buffer(gpu));
            }
            buffers.add(perHost);
        }
        return buffers;
    }

    private static void close(final List<List<DeviceBuffer>> buffers)
    {
        buffers.forEach(host -> host.forEach(DeviceBuffer::close));
    }

    private static int[] bits(final float[] values)
    {
        final int[] bits = new int[values.length];
        for (int i = 0; i < values.length; i++)
        {
            bits[i] = Float.floatToRawIntBits(values[i]);
        }
        return bits;
    }
}
