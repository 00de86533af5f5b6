package org.inagg.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.inagg.wire.InaggHeader;

/**
 * Float32 MIN and MAX on a switch that compares signed int32 lanes: each float travels as an order-preserving key of
 * its bits, {@code bits >= 0 ? bits : bits ^ 0x7FFFFFFF} (negative floats have their magnitude bits flipped, so a larger
 * magnitude is a smaller key), and the key maps back by the same function. The switch's minimum or maximum of keys is
 * the key of the floats' minimum or maximum, so the result is exact (docs/wire-format.md, "Collectives and reduce
 * ops"). {@code -0.0} sorts below {@code +0.0}; NaN has no place in the order and is refused before sending.
 */
final class OrderedKeys
{
    private static final ValueLayout.OfInt NATIVE_INT = ValueLayout.JAVA_INT_UNALIGNED;

    private OrderedKeys()
    {
    }

    /** The key of a float's bits, and the bits of a key: the function is its own inverse. */
    static int key(final int bits)
    {
        return bits >= 0 ? bits : bits ^ 0x7FFFFFFF;
    }

    /** Writes the keys of {@code count} native-order floats at byte {@code offset} as big-endian lanes. */
    static void encode(
        final MemorySegment floats, final long offset, final int count, final MemorySegment m, final long lanesOffset)
    {
        final long header = lanesOffset - InaggHeader.PAYLOAD_OFFSET;
        for (int i = 0; i < count; i++)
        {
            InaggHeader.setElement(m, header, i, key(floats.get(NATIVE_INT, offset + (long)i * Integer.BYTES)));
        }
    }

    /** Writes the floats of {@code count} big-endian key lanes as native-order floats at byte {@code offset}. */
    static void decode(
        final MemorySegment m, final long lanesOffset, final int count, final MemorySegment floats, final long offset)
    {
        final long header = lanesOffset - InaggHeader.PAYLOAD_OFFSET;
        for (int i = 0; i < count; i++)
        {
            floats.set(NATIVE_INT, offset + (long)i * Integer.BYTES, key(InaggHeader.element(m, header, i)));
        }
    }

    /** Index of the first NaN or infinity among {@code count} floats at byte {@code offset}, or -1. */
    static long firstNonFinite(final MemorySegment floats, final long offset, final long count)
    {
        for (long i = 0; i < count; i++)
        {
            if (!Float.isFinite(floats.get(ValueLayout.JAVA_FLOAT_UNALIGNED, offset + i * Float.BYTES)))
            {
                return i;
            }
        }
        return -1;
    }
}
