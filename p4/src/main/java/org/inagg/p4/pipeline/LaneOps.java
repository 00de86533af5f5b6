package org.inagg.p4.pipeline;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorSpecies;
import org.inagg.wire.InaggHeader;

/**
 * The lane arithmetic every node shares, so that a round combined on one switch, on two levels or on the parameter
 * server gives the same bits: a held array of int32 lanes ({@code sum[base..base+n)}) against big-endian lanes in a
 * message, combined with a reduce op (docs/wire-format.md, "Collectives and reduce ops": {@link InaggHeader#OP_SUM}
 * wrapping addition, {@link InaggHeader#OP_MIN} / {@link InaggHeader#OP_MAX} signed minimum / maximum), stored as they
 * came, or written back. Vectorised; no allocation.
 */
public final class LaneOps
{
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;

    private LaneOps()
    {
    }

    /** {@code sum[base + k] = sum[base + k] op lane k} for the {@code n} lanes at {@code lanesOffset}. */
    public static void combine(
        final int[] sum, final int base, final int op, final MemorySegment m, final long lanesOffset, final int n)
    {
        final int bound = INTS.loopBound(n);
        // One loop per op, each in a method of its own whose vectors never cross a call: a vector picked per lane among
        // several results merges vector boxes, and a vector returned by a method that C2 does not inline (the switch's
        // receive path is deep) is boxed, an allocation per vector, which cost the 4-rank loopback run a tenth of its
        // speed and spurious retransmissions (bisected to the helper methods of 76e1eba).
        if (op == InaggHeader.OP_MIN)
        {
            minLanes(sum, base, m, lanesOffset, bound);
        }
        else if (op == InaggHeader.OP_MAX)
        {
            maxLanes(sum, base, m, lanesOffset, bound);
        }
        else
        {
            addLanes(sum, base, m, lanesOffset, bound);
        }
        for (int i = bound; i < n; i++)
        {
            final int lane = InaggHeader.element(m, lanesOffset - InaggHeader.PAYLOAD_OFFSET, i);
            final int held = sum[base + i];
            sum[base + i] = op == InaggHeader.OP_MIN ? Math.min(held, lane)
                : op == InaggHeader.OP_MAX ? Math.max(held, lane) : held + lane;
        }
    }

    /** {@code sum[base + k] = lane k}: the first contribution, or an ALL_GATHER Owner's lanes. */
    public static void store(final int[] sum, final int base, final MemorySegment m, final long lanesOffset,
        final int n)
    {
        final int bound = INTS.loopBound(n);
        int i = 0;
        for (; i < bound; i += INTS.length())
        {
            IntVector.fromMemorySegment(INTS, m, lanesOffset + (long)i * Integer.BYTES, ByteOrder.BIG_ENDIAN)
                .intoArray(sum, base + i);
        }
        for (; i < n; i++)
        {
            sum[base + i] = InaggHeader.element(m, lanesOffset - InaggHeader.PAYLOAD_OFFSET, i);
        }
    }

    /** Writes {@code sum[base..base+n)} big-endian at {@code lanesOffset}. */
    public static void write(final int[] sum, final int base, final MemorySegment m, final long lanesOffset,
        final int n)
    {
        final int bound = INTS.loopBound(n);
        int i = 0;
        for (; i < bound; i += INTS.length())
        {
            IntVector.fromArray(INTS, sum, base + i)
                .intoMemorySegment(m, lanesOffset + (long)i * Integer.BYTES, ByteOrder.BIG_ENDIAN);
        }
        for (; i < n; i++)
        {
            InaggHeader.setElement(m, lanesOffset - InaggHeader.PAYLOAD_OFFSET, i, sum[base + i]);
        }
    }

    private static void addLanes(
        final int[] sum, final int base, final MemorySegment m, final long lanesOffset, final int bound)
    {
        for (int i = 0; i < bound; i += INTS.length())
        {
            IntVector.fromArray(INTS, sum, base + i)
                .add(IntVector.fromMemorySegment(INTS, m, lanesOffset + (long)i * Integer.BYTES, ByteOrder.BIG_ENDIAN))
                .intoArray(sum, base + i);
        }
    }

    private static void minLanes(
        final int[] sum, final int base, final MemorySegment m, final long lanesOffset, final int bound)
    {
        for (int i = 0; i < bound; i += INTS.length())
        {
            IntVector.fromArray(INTS, sum, base + i)
                .min(IntVector.fromMemorySegment(INTS, m, lanesOffset + (long)i * Integer.BYTES, ByteOrder.BIG_ENDIAN))
                .intoArray(sum, base + i);
        }
    }

    private static void maxLanes(
        final int[] sum, final int base, final MemorySegment m, final long lanesOffset, final int bound)
    {
        for (int i = 0; i < bound; i += INTS.length())
        {
            IntVector.fromArray(INTS, sum, base + i)
                .max(IntVector.fromMemorySegment(INTS, m, lanesOffset + (long)i * Integer.BYTES, ByteOrder.BIG_ENDIAN))
                .intoArray(sum, base + i);
        }
    }
}
