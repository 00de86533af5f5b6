package org.inagg.fixedpoint;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** The reference converter: one lane at a time, the same operations the vector converter applies per lane. */
public final class ScalarFixedPointConverter implements FixedPointConverter
{
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    static final ValueLayout.OfInt LANE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    @Override
    public int blockExponent(final MemorySegment floats, final long offset, final int count)
    {
        return FixedPoint.exponentOfMaxMagnitudeBits(maxMagnitudeBits(floats, offset, 0, count, 0));
    }

    @Override
    public int blockExponent(final float[] floats, final int index, final int count)
    {
        return FixedPoint.exponentOfMaxMagnitudeBits(maxMagnitudeBits(floats, index, 0, count, 0));
    }

    static int maxMagnitudeBits(final float[] floats, final int index, final int from, final int to, final int initial)
    {
        int max = initial;
        for (int i = from; i < to; i++)
        {
            max = Math.max(max, Float.floatToRawIntBits(floats[index + i]) & 0x7FFF_FFFF);
        }
        return max;
    }

    static int maxMagnitudeBits(
        final MemorySegment floats, final long offset, final int from, final int to, final int initial)
    {
        int max = initial;
        for (int i = from; i < to; i++)
        {
            max = Math.max(max, floats.get(INT, offset + (long)i * Float.BYTES) & 0x7FFF_FFFF);
        }
        return max;
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
        quantizeRange(floats, offset, 0, count, Math.scalb(1.0f, shift), lanes, lanesOffset);
    }

    static void quantizeRange(
        final MemorySegment floats,
        final long offset,
        final int from,
        final int to,
        final float scale,
        final MemorySegment lanes,
        final long lanesOffset)
    {
        for (int i = from; i < to; i++)
        {
            lanes.set(LANE, lanesOffset + (long)i * Integer.BYTES,
                roundHalfAway(floats.get(FLOAT, offset + (long)i * Float.BYTES) * scale));
        }
    }

    /** {@code round_half_away(y)}: the truncation plus the carry of twice the exact fraction. */
    static int roundHalfAway(final float y)
    {
        final int truncated = (int)y;
        final float fraction = y - (float)truncated;
        // fraction is exact and in (-1, 1); doubling it is exact, so (int)(2 * fraction) is +1 for fraction >= 0.5,
        // -1 for fraction <= -0.5 and 0 otherwise: round half away from zero without a branch.
        return truncated + (int)(fraction + fraction);
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
        dequantizeRange(lanes, lanesOffset, 0, count, Math.scalb(1.0f, -shift), floats, offset);
    }

    static void dequantizeRange(
        final MemorySegment lanes,
        final long lanesOffset,
        final int from,
        final int to,
        final float inverseScale,
        final MemorySegment floats,
        final long offset)
    {
        for (int i = from; i < to; i++)
        {
            final int lane = lanes.get(LANE, lanesOffset + (long)i * Integer.BYTES);
            floats.set(FLOAT, offset + (long)i * Float.BYTES, (float)lane * inverseScale);
        }
    }

    @Override
    public void quantize(
        final float[] floats, final int index, final int count, final int shift, final MemorySegment lanes,
        final long lanesOffset)
    {
        quantizeRange(floats, index, 0, count, Math.scalb(1.0f, shift), lanes, lanesOffset);
    }

    @Override
    public void dequantize(
        final MemorySegment lanes, final long lanesOffset, final int count, final int shift, final float[] floats,
        final int index)
    {
        dequantizeRange(lanes, lanesOffset, 0, count, Math.scalb(1.0f, -shift), floats, index);
    }

    /** {@link #quantizeRange(MemorySegment, long, int, int, float, MemorySegment, long)} from a {@code float[]}. */
    static void quantizeRange(
        final float[] floats,
        final int index,
        final int from,
        final int to,
        final float scale,
        final MemorySegment lanes,
        final long lanesOffset)
    {
        for (int i = from; i < to; i++)
        {
            lanes.set(LANE, lanesOffset + (long)i * Integer.BYTES, roundHalfAway(floats[index + i] * scale));
        }
    }

    /** {@link #dequantizeRange(MemorySegment, long, int, int, float, MemorySegment, long)} into a {@code float[]}. */
    static void dequantizeRange(
        final MemorySegment lanes,
        final long lanesOffset,
        final int from,
        final int to,
        final float inverseScale,
        final float[] floats,
        final int index)
    {
        for (int i = from; i < to; i++)
        {
            floats[index + i] = (float)lanes.get(LANE, lanesOffset + (long)i * Integer.BYTES) * inverseScale;
        }
    }

    @Override
    public void encodeInts(
        final MemorySegment ints, final long offset, final int count, final MemorySegment lanes, final long lanesOffset)
    {
        copyInts(ints, offset, INT, lanes, lanesOffset, LANE, 0, count);
    }

    @Override
    public void decodeInts(
        final MemorySegment lanes, final long lanesOffset, final int count, final MemorySegment ints, final long offset)
    {
        copyInts(lanes, lanesOffset, LANE, ints, offset, INT, 0, count);
    }

    static void copyInts(
        final MemorySegment src,
        final long srcOffset,
        final ValueLayout.OfInt srcLayout,
        final MemorySegment dst,
        final long dstOffset,
        final ValueLayout.OfInt dstLayout,
        final int from,
        final int to)
    {
        for (int i = from; i < to; i++)
        {
            dst.set(dstLayout, dstOffset + (long)i * Integer.BYTES, src.get(srcLayout, srcOffset + (long)i * Integer.BYTES));
        }
    }
}
