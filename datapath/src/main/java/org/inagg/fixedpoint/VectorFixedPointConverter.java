package org.inagg.fixedpoint;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The converter on the Vector API (jdk.incubator.vector). Lane for lane it performs the float operations of
 * {@link ScalarFixedPointConverter} (IEEE multiply, truncating conversion, exact fraction, compare), so its output is
 * bit-identical; ragged tails are handed to the scalar code.
 */
public final class VectorFixedPointConverter implements FixedPointConverter
{
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();
    private static final ByteOrder NETWORK = ByteOrder.BIG_ENDIAN;

    static boolean isUseful()
    {
        return FLOATS.length() >= 4 && FLOATS.length() == INTS.length();
    }

    @Override
    public int blockExponent(final MemorySegment floats, final long offset, final int count)
    {
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
        for (int i = 0; i < bound; i += FLOATS.length())
        {
            quantizeLanes(FloatVector.fromMemorySegment(FLOATS, floats, offset + (long)i * Float.BYTES, NATIVE)
                .mul(scale), lanes, lanesOffset + (long)i * Integer.BYTES);
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
        for (int i = 0; i < bound; i += FLOATS.length())
        {
            quantizeLanes(FloatVector.fromArray(FLOATS, floats, index + i).mul(scale), lanes,
                lanesOffset + (long)i * Integer.BYTES);
        }
        ScalarFixedPointConverter.quantizeRange(floats, index, bound, count, scale, lanes, lanesOffset);
    }

    /** Rounds half away from zero and stores big-endian: the scalar code's operations, lane for lane. */
    private static void quantizeLanes(final FloatVector y, final MemorySegment lanes, final long lanesOffset)
    {
        final IntVector truncated = (IntVector)y.convertShape(VectorOperators.F2I, INTS, 0);
        final FloatVector fraction = y.sub((FloatVector)truncated.convertShape(VectorOperators.I2F, FLOATS, 0));
        final IntVector roundAway = (IntVector)fraction.add(fraction).convertShape(VectorOperators.F2I, INTS, 0);
        truncated.add(roundAway).intoMemorySegment(lanes, lanesOffset, NETWORK);
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
        final IntVector lane = IntVector.fromMemorySegment(INTS, lanes, lanesOffset, NETWORK);
        return ((FloatVector)lane.convertShape(VectorOperators.I2F, FLOATS, 0)).mul(inverseScale);
    }

    @Override
    public void encodeInts(
        final MemorySegment ints, final long offset, final int count, final MemorySegment lanes, final long lanesOffset)
    {
        copy(ints, offset, NATIVE, lanes, lanesOffset, NETWORK, count);
        ScalarFixedPointConverter.copyInts(ints, offset, ScalarFixedPointConverter.INT, lanes, lanesOffset,
            ScalarFixedPointConverter.LANE, INTS.loopBound(count), count);
    }

    @Override
    public void decodeInts(
        final MemorySegment lanes, final long lanesOffset, final int count, final MemorySegment ints, final long offset)
    {
        copy(lanes, lanesOffset, NETWORK, ints, offset, NATIVE, count);
        ScalarFixedPointConverter.copyInts(lanes, lanesOffset, ScalarFixedPointConverter.LANE, ints, offset,
            ScalarFixedPointConverter.INT, INTS.loopBound(count), count);
    }

    private static void copy(
        final MemorySegment src,
        final long srcOffset,
        final ByteOrder srcOrder,
        final MemorySegment dst,
        final long dstOffset,
        final ByteOrder dstOrder,
        final int count)
    {
        final int bound = INTS.loopBound(count);
        for (int i = 0; i < bound; i += INTS.length())
        {
            IntVector.fromMemorySegment(INTS, src, srcOffset + (long)i * Integer.BYTES, srcOrder)
                .intoMemorySegment(dst, dstOffset + (long)i * Integer.BYTES, dstOrder);
        }
    }
}
