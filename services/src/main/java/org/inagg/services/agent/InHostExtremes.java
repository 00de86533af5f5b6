package org.inagg.services.agent;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The in-host step of MIN and MAX: the element-wise minimum or maximum of the local ranks' data regions into the
 * result region (Vector API). Exact whatever the order of the ranks, so it needs none of {@link InHostReducer}'s care
 * about summation order; it folds every input onto the result block by block. A float NaN in any input makes the
 * result NaN there ({@link Math#min(float, float)} semantics), which the caller refuses; infinities are values like
 * any other.
 */
final class InHostExtremes
{
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ORDER);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ORDER);
    private static final long BLOCK = 8192;

    private InHostExtremes()
    {
    }

    /**
     * The minimum ({@code max} false) or maximum of {@code count} elements of every input into {@code out}.
     *
     * @return false when a float of the result is NaN (always true for int32).
     */
    static boolean reduce(final MemorySegment[] inputs, final MemorySegment out, final long count, final int dtype,
        final boolean max)
    {
        return dtype == AgentProtocol.DTYPE_FLOAT32 ? floats(inputs, out, count, max) : ints(inputs, out, count, max);
    }

    private static boolean floats(final MemorySegment[] s, final MemorySegment out, final long count,
        final boolean max)
    {
        final VectorOperators.Binary op = max ? VectorOperators.MAX : VectorOperators.MIN;
        final long bound = FLOATS.loopBound(count);
        boolean nan = false;
        for (long block = 0; block < bound; block += BLOCK)
        {
            final long end = Math.min(bound, block + BLOCK) * Float.BYTES;
            MemorySegment a = s[0];
            for (int k = 1; k < s.length; k++)
            {
                final MemorySegment b = s[k];
                for (long i = block * Float.BYTES; i < end; i += (long)FLOATS.length() * Float.BYTES)
                {
                    FloatVector.fromMemorySegment(FLOATS, a, i, ORDER)
                        .lanewise(op, FloatVector.fromMemorySegment(FLOATS, b, i, ORDER))
                        .intoMemorySegment(out, i, ORDER);
                }
                a = out;
            }
            if (s.length == 1)
            {
                MemorySegment.copy(a, block * Float.BYTES, out, block * Float.BYTES, end - block * Float.BYTES);
            }
            for (long i = block * Float.BYTES; i < end; i += (long)FLOATS.length() * Float.BYTES)
            {
                nan |= FloatVector.fromMemorySegment(FLOATS, out, i, ORDER).test(VectorOperators.IS_NAN).anyTrue();
            }
        }
        for (long i = bound; i < count; i++)
        {
            float v = s[0].getAtIndex(FLOAT, i);
            for (int k = 1; k < s.length; k++)
            {
                v = max ? Math.max(v, s[k].getAtIndex(FLOAT, i)) : Math.min(v, s[k].getAtIndex(FLOAT, i));
            }
            out.setAtIndex(FLOAT, i, v);
            nan |= Float.isNaN(v);
        }
        return !nan;
    }

    private static boolean ints(final MemorySegment[] s, final MemorySegment out, final long count,
        final boolean max)
    {
        final VectorOperators.Binary op = max ? VectorOperators.MAX : VectorOperators.MIN;
        final long bound = INTS.loopBound(count);
        for (long block = 0; block < bound; block += BLOCK)
        {
            final long end = Math.min(bound, block + BLOCK) * Integer.BYTES;
            MemorySegment a = s[0];
            for (int k = 1; k < s.length; k++)
            {
                final MemorySegment b = s[k];
                for (long i = block * Integer.BYTES; i < end; i += (long)INTS.length() * Integer.BYTES)
                {
                    IntVector.fromMemorySegment(INTS, a, i, ORDER)
                        .lanewise(op, IntVector.fromMemorySegment(INTS, b, i, ORDER))
                        .intoMemorySegment(out, i, ORDER);
                }
                a = out;
            }
            if (s.length == 1)
            {
                MemorySegment.copy(a, block * Integer.BYTES, out, block * Integer.BYTES, end - block * Integer.BYTES);
            }
        }
        for (long i = bound; i < count; i++)
        {
            int v = s[0].getAtIndex(INT, i);
            for (int k = 1; k < s.length; k++)
            {
                v = max ? Math.max(v, s[k].getAtIndex(INT, i)) : Math.min(v, s[k].getAtIndex(INT, i));
            }
            out.setAtIndex(INT, i, v);
        }
        return true;
    }
}
