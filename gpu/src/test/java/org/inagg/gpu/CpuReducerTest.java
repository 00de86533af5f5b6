package org.inagg.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.ScalarFixedPointConverter;
import org.inagg.fixedpoint.VectorFixedPointConverter;

/** The CPU reducer against the datapath's reference converter: every result bit-identical. */
class CpuReducerTest
{
    private static final ValueLayout.OfInt BIG = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private final CpuReducer cpu = new CpuReducer();
    private final ScalarFixedPointConverter scalar = new ScalarFixedPointConverter();

    @Property(tries = 60)
    void shouldQuantizeBitIdenticallyToTheScalarConverter(
        @ForAll final long seed, @ForAll @IntRange(min = 1, max = 3000) final int count,
        @ForAll @IntRange(min = 1, max = 400) final int blockSize, @ForAll @IntRange(min = 1, max = 64) final int workers)
    {
        final float[] x = Gradients.random(seed, count, blockSize);
        try (HostMemoryBuffer floats = Gradients.buffer(x);
             HostMemoryBuffer exponents = HostMemoryBuffer.allocate(((count + blockSize - 1) / blockSize) * 4L);
             HostMemoryBuffer nativeLanes = HostMemoryBuffer.allocate(count * 4L);
             HostMemoryBuffer networkLanes = HostMemoryBuffer.allocate(count * 4L);
             HostMemoryBuffer back = HostMemoryBuffer.allocate(count * 4L);
             Arena arena = Arena.ofConfined())
        {
            cpu.blockExponents(floats, count, blockSize, exponents);
            final BlockScaling scaling = new BlockScaling(exponents, blockSize, workers);
            cpu.quantize(floats, count, scaling, LaneOrder.NATIVE, nativeLanes);
            cpu.quantize(floats, count, scaling, LaneOrder.NETWORK, networkLanes);

            final MemorySegment expected = arena.allocate(count * 4L);
            final MemorySegment expectedFloats = arena.allocate(count * 4L);
            for (int b = 0; b * blockSize < count; b++)
            {
                final int n = Math.min(blockSize, count - b * blockSize);
                final long offset = (long)b * blockSize * 4;
                final int exponent = scalar.blockExponent(floats.segment(), offset, n);
                assertThat(exponents.segment().getAtIndex(Gradients.INT, b)).isEqualTo(exponent);
                scalar.quantize(floats.segment(), offset, n, FixedPoint.shift(exponent, workers), expected, offset);
                scalar.dequantize(expected, offset, n, FixedPoint.shift(exponent, workers), expectedFloats, offset);
            }
            for (int i = 0; i < count; i++)
            {
                assertThat(networkLanes.segment().getAtIndex(Gradients.INT, i))
                    .isEqualTo(expected.getAtIndex(Gradients.INT, i));
                assertThat(nativeLanes.segment().getAtIndex(Gradients.INT, i)).isEqualTo(expected.getAtIndex(BIG, i));
            }

            cpu.dequantize(nativeLanes, count, scaling, LaneOrder.NATIVE, back);
            assertThat(back.segment().toArray(Gradients.INT)).isEqualTo(expectedFloats.toArray(Gradients.INT));
            cpu.dequantize(networkLanes, count, scaling, LaneOrder.NETWORK, back);
            assertThat(back.segment().toArray(Gradients.INT)).isEqualTo(expectedFloats.toArray(Gradients.INT));
        }
    }

    @Property(tries = 40)
    void shouldReduceAndQuantizeToTheIntSumOfEachSourceQuantized(
        @ForAll final long seed, @ForAll @IntRange(min = 1, max = 2000) final int count,
        @ForAll @IntRange(min = 1, max = 8) final int k, @ForAll @IntRange(min = 8, max = 300) final int blockSize)
    {
        final List<HostMemoryBuffer> owned = new ArrayList<>();
        try
        {
            final List<DeviceBuffer> sources = new ArrayList<>();
            for (int j = 0; j < k; j++)
            {
                final HostMemoryBuffer source = Gradients.buffer(Gradients.random(seed + j, count, blockSize));
                owned.add(source);
                sources.add(source);
            }
            final int blocks = (count + blockSize - 1) / blockSize;
            final List<DeviceBuffer> exponents = new ArrayList<>();
            for (final DeviceBuffer source : sources)
            {
                final HostMemoryBuffer e = HostMemoryBuffer.allocate(blocks * 4L);
                owned.add(e);
                cpu.blockExponents(source, count, blockSize, e);
                exponents.add(e);
            }
            final HostMemoryBuffer agreed = HostMemoryBuffer.allocate(blocks * 4L);
            owned.add(agreed);
            cpu.maxExponents(exponents, blocks, agreed);
            final BlockScaling scaling = new BlockScaling(agreed, blockSize, k);
            final HostMemoryBuffer fused = HostMemoryBuffer.allocate(count * 4L);
            final HostMemoryBuffer fusedNetwork = HostMemoryBuffer.allocate(count * 4L);
            final HostMemoryBuffer lanes = HostMemoryBuffer.allocate(count * 4L);
            final HostMemoryBuffer summed = HostMemoryBuffer.allocate(count * 4L);
            owned.addAll(List.of(fused, fusedNetwork, lanes, summed));
            cpu.reduceAndQuantize(sources, count, scaling, LaneOrder.NATIVE, fused);
            cpu.reduceAndQuantize(sources, count, scaling, LaneOrder.NETWORK, fusedNetwork);

            final List<DeviceBuffer> quantized = new ArrayList<>();
            for (final DeviceBuffer source : sources)
            {
                final HostMemoryBuffer q = HostMemoryBuffer.allocate(count * 4L);
                owned.add(q);
                cpu.quantize(source, count, scaling, LaneOrder.NATIVE, q);
                quantized.add(q);
            }
            cpu.sumInts(quantized, count, summed);
            final int[] expected = Gradients.intsOf(summed, count);
            assertThat(Gradients.intsOf(fused, count)).isEqualTo(expected);
            for (int i = 0; i < count; i++)
            {
                assertThat(fusedNetwork.segment().getAtIndex(BIG, i)).isEqualTo(expected[i]);
                long exact = 0;
                for (final DeviceBuffer q : quantized)
                {
                    exact += q.hostSegment().orElseThrow().getAtIndex(Gradients.INT, i);
                }
                assertThat(exact).as("no overflow with headroom for k").isEqualTo(expected[i]);
            }
        }
        finally
        {
            owned.forEach(HostMemoryBuffer::close);
        }
    }

    @Property(tries = 30)
    void shouldSumFloatsLeftToRightAndIntsWrapping(
        @ForAll final long seed, @ForAll @IntRange(min = 1, max = 1000) final int count,
        @ForAll @IntRange(min = 1, max = 6) final int k)
    {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        final float[][] f = new float[k][count];
        final int[][] n = new int[k][count];
        final List<DeviceBuffer> floatSources = new ArrayList<>();
        final List<DeviceBuffer> intSources = new ArrayList<>();
        for (int j = 0; j < k; j++)
        {
            for (int i = 0; i < count; i++)
            {
                f[j][i] = (float)(random.nextGaussian() * Math.scalb(1.0, random.nextInt(-20, 20)));
                n[j][i] = random.nextInt();
            }
            floatSources.add(Gradients.buffer(f[j]));
            intSources.add(Gradients.ints(n[j]));
        }
        try (HostMemoryBuffer fs = HostMemoryBuffer.allocate(count * 4L);
             HostMemoryBuffer is = HostMemoryBuffer.allocate(count * 4L))
        {
            cpu.sumFloats(floatSources, count, fs);
            cpu.sumInts(intSources, count, is);
            for (int i = 0; i < count; i++)
            {
                float sum = f[0][i];
                int isum = n[0][i];
                for (int j = 1; j < k; j++)
                {
                    sum += f[j][i];
                    isum += n[j][i];
                }
                assertThat(Float.floatToRawIntBits(fs.segment().getAtIndex(Gradients.FLOAT, i)))
                    .isEqualTo(Float.floatToRawIntBits(sum));
                assertThat(is.segment().getAtIndex(Gradients.INT, i)).isEqualTo(isum);
            }
        }
        finally
        {
            floatSources.forEach(DeviceBuffer::close);
            intSources.forEach(DeviceBuffer::close);
        }
    }

    @Property(tries = 30)
    void shouldReportNonFiniteBlocksAsTheDatapathDoes(
        @ForAll @IntRange(min = 0, max = 999) final int at, @ForAll @IntRange(min = 0, max = 2) final int kind)
    {
        final float[] x = Gradients.random(at, 1000, 100);
        x[at] = kind == 0 ? Float.NaN : kind == 1 ? Float.POSITIVE_INFINITY : Float.NEGATIVE_INFINITY;
        try (HostMemoryBuffer floats = Gradients.buffer(x); HostMemoryBuffer e = HostMemoryBuffer.allocate(40))
        {
            cpu.blockExponents(floats, 1000, 100, e);
            final VectorFixedPointConverter vector = new VectorFixedPointConverter();
            for (int b = 0; b < 10; b++)
            {
                assertThat(e.segment().getAtIndex(Gradients.INT, b))
                    .isEqualTo(vector.blockExponent(floats.segment(), b * 400L, 100))
                    .isEqualTo(b == at / 100 ? FixedPoint.NON_FINITE : scalar.blockExponent(floats.segment(), b * 400L, 100));
            }
        }
    }
}
