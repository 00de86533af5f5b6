package org.inagg.fixedpoint;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The converter on the Vector API (jdk.incubator.vector), bit-identical to {@link ScalarFixedPointConverter}; ragged
 * tails are handed to the scalar code.
 * <p>
 * Quantize rounds with one float-to-int conversion per lane instead of the reference's three:
 * {@code (int)(y + copySign(0.5f - 2^-25, y))} equals {@code round_half_away(y)} for every float with
 * {@code |y| < 2^31} (checked over all of them, and property-tested against the scalar code). Adding the largest
 * float below one half carries a fraction of one half or more over the next integer and nothing less; the sum's own
 * rounding cannot carry further, because where the float spacing reaches one half, {@code y} has no fraction below
 * one half left. The loop keeps the largest {@code |y|} of the block as it goes; a block that held a lane at or beyond
 * {@code 2^31}, an infinity or a NaN (which Java's saturating conversion treats differently) is quantized again with
 * the reference's operations, lane for lane as the scalar code does. A worker's lanes never reach there: its shift
 * leaves {@code |y| < 2^30}.
 */
public final class VectorFixedPointConverter implements FixedPointConverter
{
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();
    private static final ByteOrder NETWORK = ByteOrder.BIG_ENDIAN;
    private static final boolean SWAP = NATIVE != NETWORK;
    private static final int SIGN_BIT = 0x8000_0000;
    /** {@code 0.5f - 2^-25}, the largest float below one half. */
    private static final float JUST_BELOW_HALF = 0.49999997f;
    /** Bits of 2^31: a magnitude from here up (infinities and NaN included) takes the reference's operations. */
    private static final int ONE_STEP_LIMIT = Float.floatToRawIntBits(0x1p31f);

    static boolean isUseful()
    {
        return FLOATS.length() >= 4 && FLOATS.length() == INTS.length();
    }

    @Override
    public int blockExponent(final MemorySegment floats, final long offset, final int count)
    {
        final float[] array = floatArray(floats, offset, count);
        if (array != null)
        {
            // A heap segment read through IntVector.fromMemorySegment ran 30x slower than the array (JMH).
            return blockExponent(array, (int)((floats.address() + offset) >>> 2), count);
        }
        final int bound = INTS.loopBound(count);
        IntVector max = IntVector.zero(INTS);
        for (int i = 0; i < bound; i += INTS.length())
        {
            final IntVector bits = IntVector.fromMemorySegment(INTS, floats, offset + (long)i * Float.BYTES, NATIVE);
            max = max.max(bits.and(0x7FFF_FFFF));
        }
        final int vectorMax = max.reduceLanes(VectorOperators.MAX);
        return FixedPoint.exponentOfMaxMagnitudeBits(
            ScalarFixedPointConverter.maxMagnitudeBits(floats, offset, bound, count, vectorMax));
    }

    @Override
    public int blockExponent(final float[] floats, final int index, final int count)
    {
        final int bound = FLOATS.loopBound(count);
        IntVector max = IntVector.zero(INTS);
        for (int i = 0; i < bound; i += FLOATS.length())
        {
            final IntVector bits = FloatVector.fromArray(FLOATS, floats, index + i).reinterpretAsInts();
            max = max.max(bits.and(0x7FFF_FFFF));
        }
        final int vectorMax = max.reduceLanes(VectorOperators.MAX);
        return FixedPoint.exponentOfMaxMagnitudeBits(
            ScalarFixedPointConverter.maxMagnitudeBits(floats, index, bound, count, vectorMax));
    }

    @Override
    public void quantize(
        final MemorySegment floats,
        final long offset,
        final int count,
        final int shift,
        final MemorySegment lanes,
        final long lanesOffset)
    {
        final float scale = Math.scalb(1.0f, shift);
        final int bound = FLOATS.loopBound(count);
        final float[] array = floatArray(floats, offset, count);
        if (array != null)
        {
            quantize(array, (int)((floats.address() + offset) >>> 2), count, shift, lanes, lanesOffset);
            return;
        }
        IntVector maxMagnitude = IntVector.zero(INTS);
        for (int i = 0; i < bound; i += FLOATS.length())
        {
            maxMagnitude = maxMagnitude.max(roundInOneStep(
                FloatVector.fromMemorySegment(FLOATS, floats, offset + (long)i * Float.BYTES, NATIVE).mul(scale),
                lanes, lanesOffset + (long)i * Integer.BYTES));
        }
        if (maxMagnitude.reduceLanes(VectorOperators.MAX) >= ONE_STEP_LIMIT)
        {
            ScalarFixedPointConverter.quantizeRange(floats, offset, 0, bound, scale, lanes, lanesOffset);
        }
        ScalarFixedPointConverter.quantizeRange(floats, offset, bound, count, scale, lanes, lanesOffset);
    }

    @Override
    public void quantize(
        final float[] floats, final int index, final int count, final int shift, final MemorySegment lanes,
        final long lanesOffset)
    {
        final float scale = Math.scalb(1.0f, shift);
        final int bound = FLOATS.loopBound(count);
        IntVector maxMagnitude = IntVector.zero(INTS);
        for (int i = 0; i < bound; i += FLOATS.length())
        {
            maxMagnitude = maxMagnitude.max(roundInOneStep(FloatVector.fromArray(FLOATS, floats, index + i).mul(scale),
                lanes, lanesOffset + (long)i * Integer.BYTES));
        }
        if (maxMagnitude.reduceLanes(VectorOperators.MAX) >= ONE_STEP_LIMIT)
        {
            ScalarFixedPointConverter.quantizeRange(floats, index, 0, bound, scale, lanes, lanesOffset);
        }
        ScalarFixedPointConverter.quantizeRange(floats, index, bound, count, scale, lanes, lanesOffset);
    }

    /**
     * Stores {@code (int)(y + copySign(0.5f - 2^-25, y))} big-endian (the reference's bits wherever {@code |y| < 2^31})
     * and returns the lanes' magnitudes as bits, for the caller's check that every lane was in that range. The sign
     * is a compare and a blend: building it with integer and/or on the float's bits ran 2x slower (JDK 25, AVX2).
     */
    private static IntVector roundInOneStep(final FloatVector y, final MemorySegment lanes, final long lanesOffset)
    {
        final FloatVector justBelowHalf = FloatVector.broadcast(FLOATS, JUST_BELOW_HALF)
            .blend(-JUST_BELOW_HALF, y.lt(0.0f));
        toNetworkOrder((IntVector)y.add(justBelowHalf).convert(VectorOperators.F2I, 0))
            .intoMemorySegment(lanes, lanesOffset, NATIVE);
        return y.reinterpretAsInts().and(~SIGN_BIT);
    }

    /**
     * Native to big-endian order and back on a little-endian host: the bytes of each lane reversed in a register,
     * then a native load or store. Loading or storing through {@code ByteOrder.BIG_ENDIAN} instead added 12 to 60 µs
     * per MiB (JDK 25, AVX2).
     */
    private static IntVector toNetworkOrder(final IntVector lanes)
    {
        return SWAP ? lanes.lanewise(VectorOperators.REVERSE_BYTES) : lanes;
    }

    /**
     * The {@code float[]} behind a writable heap segment of floats ({@code MemorySegment.ofArray(float[])}, what a
     * {@code float[]} handed to the API becomes) whose {@code count} floats at {@code offset} are aligned and in bounds,
     * else null. Vector loads and stores on the array run 3 to 7 times faster than on the segment that wraps it (JDK 25,
     * AVX2; docs/performance.md), so both directions take the array where there is one.
     */
    private static float[] floatArray(final MemorySegment floats, final long offset, final int count)
    {
        if (floats.isNative() || ((floats.address() + offset) & (Float.BYTES - 1)) != 0
            || offset < 0 || offset + (long)count * Float.BYTES > floats.byteSize())
        {
            return null;
        }
        return floats.heapBase().orElse(null) instanceof float[] array ? array : null;
    }

    @Override
    public void dequantize(
        final MemorySegment lanes,
        final long lanesOffset,
        final int count,
        final int shift,
        final MemorySegment floats,
        final long offset)
    {
        final float inverseScale = Math.scalb(1.0f, -shift);
        final int bound = INTS.loopBound(count);
        final float[] array = floatArray(floats, offset, count);
        if (array != null)
        {
            dequantize(lanes, lanesOffset, count, shift, array, (int)((floats.address() + offset) >>> 2));
            return;
        }
        for (int i = 0; i < bound; i += INTS.length())
        {
            dequantizeLanes(lanes, lanesOffset + (long)i * Integer.BYTES, inverseScale)
                .intoMemorySegment(floats, offset + (long)i * Float.BYTES, NATIVE);
        }
        ScalarFixedPointConverter.dequantizeRange(lanes, lanesOffset, bound, count, inverseScale, floats, offset);
    }

    @Override
    public void dequantize(
        final MemorySegment lanes, final long lanesOffset, final int count, final int shift, final float[] floats,
        final int index)
    {
        final float inverseScale = Math.scalb(1.0f, -shift);
        final int bound = INTS.loopBound(count);
        for (int i = 0; i < bound; i += INTS.length())
        {
            dequantizeLanes(lanes, lanesOffset + (long)i * Integer.BYTES, inverseScale).intoArray(floats, index + i);
        }
        ScalarFixedPointConverter.dequantizeRange(lanes, lanesOffset, bound, count, inverseScale, floats, index);
    }

    private static FloatVector dequantizeLanes(final MemorySegment lanes, final long lanesOffset, final float inverseScale)
    {
        final IntVector lane = toNetworkOrder(IntVector.fromMemorySegment(INTS, lanes, lanesOffset, NATIVE));
        return ((FloatVector)lane.convertShape(VectorOperators.I2F, FLOATS, 0)).mul(inverseScale);
    }

    @Override
    public void encodeInts(
        final MemorySegment ints, final long offset, final int count, final MemorySegment lanes, final long lanesOffset)
    {
        copySwappingOrder(ints, offset, lanes, lanesOffset, count);
        ScalarFixedPointConverter.copyInts(ints, offset, ScalarFixedPointConverter.INT, lanes, lanesOffset,
            ScalarFixedPointConverter.LANE, INTS.loopBound(count), count);
    }

    @Override
    public void decodeInts(
        final MemorySegment lanes, final long lanesOffset, final int count, final MemorySegment ints, final long offset)
    {
        copySwappingOrder(lanes, lanesOffset, ints, offset, count);
        ScalarFixedPointConverter.copyInts(lanes, lanesOffset, ScalarFixedPointConverter.LANE, ints, offset,
            ScalarFixedPointConverter.INT, INTS.loopBound(count), count);
    }

    /** Native-order ints to big-endian lanes or back: the same byte reversal either way. */
    private static void copySwappingOrder(
        final MemorySegment src, final long srcOffset, final MemorySegment dst, final long dstOffset, final int count)
    {
        final int bound = INTS.loopBound(count);
        for (int i = 0; i < bound; i += INTS.length())
        {
            toNetworkOrder(IntVector.fromMemorySegment(INTS, src, srcOffset + (long)i * Integer.BYTES, NATIVE))
                .intoMemorySegment(dst, dstOffset + (long)i * Integer.BYTES, NATIVE);
        }
    }
}
