package org.inagg.fixedpoint;

import java.lang.foreign.MemorySegment;

/**
 * Converts float blocks to the wire's fixed point and back. Sources and destinations are memory segments with byte
 * offsets: tensors in native byte order, packet lanes in network (big-endian) order, so packets are filled and read in
 * place. Every implementation gives bit-identical results; see {@link FixedPoint} for the arithmetic.
 */
public interface FixedPointConverter
{
    /**
     * Exponent of the block of {@code count} floats at {@code offset}: the smallest {@code e} with every
     * {@code |x| < 2^e}, clamped to [{@link FixedPoint#MIN_EXPONENT}, {@link FixedPoint#MAX_EXPONENT}], or
     * {@link FixedPoint#NON_FINITE} if the block holds NaN, an infinity or a magnitude of 2^127 or more.
     */
    int blockExponent(MemorySegment floats, long offset, int count);

    /** {@link #blockExponent(MemorySegment, long, int)} of {@code floats[index..index+count)}. */
    int blockExponent(float[] floats, int index, int count);

    /**
     * Writes {@code round_half_away(x * 2^shift)} of {@code count} floats as big-endian int32 lanes, which must not
     * overlap the floats.
     */
    void quantize(MemorySegment floats, long offset, int count, int shift, MemorySegment lanes, long lanesOffset);

    /** Writes {@code (float)lane * 2^-shift} of {@code count} big-endian lanes as native-order floats. */
    void dequantize(MemorySegment lanes, long lanesOffset, int count, int shift, MemorySegment floats, long offset);

    /**
     * {@link #quantize(MemorySegment, long, int, int, MemorySegment, long)} of {@code floats[index..index+count)}: the
     * same bits, for a tensor known to be a {@code float[]}. A worker resolves the array once per all-reduce on the
     * caller's thread ({@code AllReduceOperation}); asking each packet's segment for it ({@code heapBase()}) makes an
     * {@code Optional} that the JIT removes only while the caller is compiled as it likes.
     */
    void quantize(float[] floats, int index, int count, int shift, MemorySegment lanes, long lanesOffset);

    /** {@link #dequantize(MemorySegment, long, int, int, MemorySegment, long)} into {@code floats[index..]}. */
    void dequantize(MemorySegment lanes, long lanesOffset, int count, int shift, float[] floats, int index);

    /** Copies native-order int32 values to big-endian lanes. */
    void encodeInts(MemorySegment ints, long offset, int count, MemorySegment lanes, long lanesOffset);

    /** Copies big-endian lanes to native-order int32 values. */
    void decodeInts(MemorySegment lanes, long lanesOffset, int count, MemorySegment ints, long offset);

    /**
     * Index (relative to the start of the range) of the first NaN, infinity or magnitude of 2^127 or more among
     * {@code count} floats, or -1.
     */
    static long firstNonFinite(final MemorySegment floats, final long offset, final long count)
    {
        for (long i = 0; i < count; i++)
        {
            if (!(Math.abs(floats.get(ScalarFixedPointConverter.FLOAT, offset + i * Float.BYTES))
                < FixedPoint.OUT_OF_RANGE_MAGNITUDE))
            {
                return i;
            }
        }
        return -1;
    }

    /** The fastest converter on this JVM: the Vector API one where its species has at least 4 lanes. */
    static FixedPointConverter best()
    {
        return VectorFixedPointConverter.isUseful() ? new VectorFixedPointConverter() : new ScalarFixedPointConverter();
    }
}
