package org.inagg.fixedpoint;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The vector converter's quantize (one float-to-int conversion per lane, the reference's three where a lane reaches
 * 2^31) and dequantize (bytes reversed in registers) against a reference written here from the definition in
 * {@link FixedPoint}, on plain arrays and a {@link ByteBuffer}: every kind of float (NaN, infinities, subnormals, the
 * extremes, ties), every shift a job can produce and the block sizes in use (256 lanes, 16,000 for 64 KB datagrams, 120
 * for the P4 lab, and ragged ones), from arrays, heap segments and native memory.
 */
class VectorQuantizeReferenceTest
{
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    private static final int[] BLOCK_SIZES = {1, 7, 8, 9, 15, 16, 17, 64, 120, 255, 256, 257, 1000, 16000};
    private final FixedPointConverter vector = new VectorFixedPointConverter();

    /** Java's {@code (int)} saturates and maps NaN to 0; the reference keeps exactly those semantics. */
    private static int roundHalfAway(final float y)
    {
        final int truncated = (int)y;
        final float fraction = y - (float)truncated;
        return truncated + (int)(fraction + fraction);
    }

    private static byte[] referenceLanes(final float[] floats, final int shift)
    {
        final ByteBuffer lanes = ByteBuffer.allocate(floats.length * Integer.BYTES).order(ByteOrder.BIG_ENDIAN);
        final float scale = Math.scalb(1.0f, shift);
        for (final float x : floats)
        {
            lanes.putInt(roundHalfAway(x * scale));
        }
        return lanes.array();
    }

    private static float[] referenceFloats(final byte[] lanes, final int shift)
    {
        final ByteBuffer buffer = ByteBuffer.wrap(lanes).order(ByteOrder.BIG_ENDIAN);
        final float inverseScale = Math.scalb(1.0f, -shift);
        final float[] floats = new float[lanes.length / Integer.BYTES];
        for (int i = 0; i < floats.length; i++)
        {
            floats[i] = (float)buffer.getInt() * inverseScale;
        }
        return floats;
    }

    @Provide
    Arbitrary<Float> anyFloat()
    {
        final Arbitrary<Float> anyBits = Arbitraries.integers().map(Float::intBitsToFloat);
        final Arbitrary<Float> special = Arbitraries.of(Float.NaN, Float.intBitsToFloat(0xFFC0_0001),
            Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MAX_VALUE, -Float.MAX_VALUE, Float.MIN_VALUE,
            -Float.MIN_VALUE, Float.MIN_NORMAL, Math.nextDown(Float.MIN_NORMAL), 0f, -0f, 0.5f, -0.5f, 0.49999997f,
            -0.49999997f, 0x1p31f, -0x1p31f, Math.nextDown(0x1p31f), Math.nextUp(-0x1p31f), 0x1p23f + 1, 0x1p22f + 0.5f);
        final Arbitrary<Float> subnormal = Arbitraries.integers().between(1, 0x7F_FFFF)
            .flatMap(bits -> Arbitraries.of(1, -1).map(sign -> sign * Float.intBitsToFloat(bits)));
        final Arbitrary<Float> tie = Arbitraries.integers().between(-(1 << 24), 1 << 24)
            .flatMap(k -> Arbitraries.integers().between(-30, 8).map(e -> Math.scalb(k + 0.5f, e)));
        final Arbitrary<Float> gaussian = Arbitraries.doubles().between(-8, 8).map(Double::floatValue);
        return Arbitraries.frequencyOf(Tuple.of(3, anyBits), Tuple.of(1, special), Tuple.of(1, subnormal),
            Tuple.of(2, tie), Tuple.of(4, gaussian));
    }

    /**
     * Mostly finite blocks whose shift keeps every lane below 2^31 (a worker's case: the one-conversion rounding), and
     * blocks with NaN, infinities or lanes beyond 2^31 (the reference's operations, whatever Java's saturation gives).
     */
    @Property(tries = 400)
    void shouldQuantizeAndDequantizeToTheReferenceBits(
        @ForAll("anyFloat") final float seed,
        @ForAll @IntRange(min = 0, max = 17) final int sizeChoice,
        @ForAll @IntRange(min = 1, max = 300) final int otherSize,
        @ForAll @IntRange(min = -130, max = 160) final int anyShift,
        @ForAll @IntRange(min = 1, max = 65535) final int workers,
        @ForAll final boolean workerShift,
        @ForAll @IntRange(min = 0, max = 2) final int source,
        @ForAll @IntRange(min = 0, max = 5) final int lanesOffset,
        @ForAll final long randomSeed)
    {
        final int n = sizeChoice < BLOCK_SIZES.length ? BLOCK_SIZES[sizeChoice] : otherSize;
        final java.util.SplittableRandom random = new java.util.SplittableRandom(randomSeed);
        final float[] floats = new float[n];
        final int kind = random.nextInt(4);
        for (int i = 0; i < n; i++)
        {
            floats[i] = switch (kind)
            {
                case 0 -> (float)random.nextGaussian();
                case 1 -> Math.scalb((float)random.nextGaussian(), random.nextInt(-140, 128));
                case 2 -> Float.intBitsToFloat(random.nextInt());
                default -> random.nextInt(8) == 0 ? seed : (float)random.nextGaussian() * 1e-3f;
            };
        }
        floats[random.nextInt(n)] = seed;
        final int exponent = vector.blockExponent(floats, 0, n);
        final int shift = workerShift && exponent != FixedPoint.NON_FINITE ? FixedPoint.shift(exponent, workers) : anyShift;

        final MemorySegment lanes = Arena.ofAuto().allocate(n * 4L + lanesOffset + 3);
        final MemorySegment lanesSlice = lanes.asSlice(lanesOffset, n * 4L);
        switch (source)
        {
            case 0 -> vector.quantize(floats, 0, n, shift, lanes, lanesOffset);
            case 1 -> vector.quantize(MemorySegment.ofArray(floats), 0, n, shift, lanes, lanesOffset);
            default -> vector.quantize(Arena.ofAuto().allocate(n * 4L, 32).copyFrom(MemorySegment.ofArray(floats)), 0,
                n, shift, lanes, lanesOffset);
        }
        final byte[] expectedLanes = referenceLanes(floats, shift);
        assertThat(lanesSlice.toArray(ValueLayout.JAVA_BYTE)).as("lanes of %d floats, shift %d", n, shift)
            .containsExactly(expectedLanes);

        final float[] expected = referenceFloats(expectedLanes, shift);
        final float[] back = new float[n];
        final MemorySegment nativeBack = Arena.ofAuto().allocate(n * 4L);
        if (source == 0)
        {
            vector.dequantize(lanes, lanesOffset, n, shift, back, 0);
        }
        else
        {
            vector.dequantize(lanes, lanesOffset, n, shift, source == 1 ? MemorySegment.ofArray(back) : nativeBack, 0);
        }
        final float[] got = source == 2 ? nativeBack.toArray(FLOAT) : back;
        for (int i = 0; i < n; i++)
        {
            assertThat(Float.floatToRawIntBits(got[i])).as("float %d", i).isEqualTo(Float.floatToRawIntBits(expected[i]));
        }
    }

    /**
     * Every float of the binades where rounding decides (|y| in [2^-2, 2^2) and [2^21, 2^25)), and the last 2^16 floats
     * below 2^31 and from 2^31 up, both signs, in 256-lane blocks.
     */
    @Test
    void shouldMatchTheReferenceOnEveryFloatWhereRoundingDecides()
    {
        final int[][] ranges = {
            {Float.floatToRawIntBits(0x1p-2f), Float.floatToRawIntBits(0x1p2f)},
            {Float.floatToRawIntBits(0x1p21f), Float.floatToRawIntBits(0x1p25f)},
            {Float.floatToRawIntBits(0x1p31f) - (1 << 16), Float.floatToRawIntBits(0x1p31f) + (1 << 16)},
        };
        final int blockLanes = 256;
        final float[] floats = new float[blockLanes];
        final MemorySegment lanes = Arena.ofAuto().allocate(blockLanes * 4L);
        long checked = 0;
        for (final int[] range : ranges)
        {
            for (int bits = range[0]; bits < range[1]; bits += blockLanes / 2)
            {
                for (int i = 0; i < blockLanes; i++)
                {
                    floats[i] = Float.intBitsToFloat((bits + (i >> 1)) | (i & 1) << 31);
                }
                vector.quantize(floats, 0, blockLanes, 0, lanes, 0);
                final byte[] expected = referenceLanes(floats, 0);
                if (!java.util.Arrays.equals(lanes.toArray(ValueLayout.JAVA_BYTE), expected))
                {
                    assertThat(lanes.toArray(ValueLayout.JAVA_BYTE)).as("block from bits %x", bits)
                        .containsExactly(expected);
                }
                checked += blockLanes;
            }
        }
        assertThat(checked).isGreaterThan(2L * ((4L << 23) + (4L << 23)));
    }
}
