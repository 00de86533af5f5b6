package org.inagg.p4.softswitch;

import java.lang.foreign.MemorySegment;

import org.inagg.p4.pipeline.LaneOps;
import org.inagg.wire.InaggHeader;

/**
 * The register arrays of one job: for every slot and shadow copy (index {@code 2 * slot + copy}) a round sequence, a
 * contributor count, a worker bitmap, the max-reduced next exponent, the round's lane count and the int32 lane sums.
 * Each method is one register action of the P4 programs, named after it; a packet passes them in the order
 * {@link #roundAction} → {@link #seenAction} → {@link #countAction} → {@link #lanesAction} → {@link #exponentAction}.
 * <pre>
 *   copy index i = 2*slot + copy
 *   round[i]     : int   sequence of the round the copy holds          (P4: register seq_reg)
 *   count[i]     : int   contributors so far, W when complete           (P4: register count_reg, paired with seq)
 *   seen[i][w]   : bit   worker w contributed to the copy's round       (P4: register seen_reg, W bits per copy)
 *   exponent[i]  : byte  max of the contributors' Next Exponent         (P4: register exp_reg)
 *   lanes[i]     : int   lane count of the round                        (P4: register lanes_reg)
 *   sum[i][k]    : int32 lane k combined with the round's op            (P4: registers lane_k, one per lane)
 * </pre>
 * The lanes of a round are combined with the packet's reduce op (wrapping SUM, signed MIN or MAX: docs/wire-format.md,
 * "Collectives and reduce ops"); an ALL_GATHER round holds its owner's lanes as they came ({@link #gatherAction}),
 * and its header-only contributions ({@link #NO_LANE_COUNT}) neither set nor check the round's lane count.
 */
final class SlotPool
{
    /** Outcomes of {@link #roundAction}. */
    static final int ROUND_NEW = 0;
    static final int ROUND_OPEN = 1;
    static final int ROUND_COMPLETE = 2;
    static final int ROUND_STALE = 3;
    static final int ROUND_VIOLATION = 4;
    static final int ROUND_BAD_SIZE = 5;
    /** The lane count of a header-only ALL_GATHER contribution for {@link #roundAction}: it sets and checks nothing. */
    static final int NO_LANE_COUNT = -1;

    private final int contributors;
    private final int lanesPerPacket;
    private final int bitmapWords;
    private final boolean[] used;
    private final int[] round;
    private final int[] count;
    private final long[] seen;
    private final byte[] exponent;
    private final int[] lanes;
    private final int[] sum;

    SlotPool(final int slots, final int workers, final int lanesPerPacket)
    {
        this(slots, workers, workers, lanesPerPacket);
    }

    /**
     * @param workers      worker ids are {@code 0..workers-1} (the bitmap's width).
     * @param contributors fresh contributions that complete a round: {@code workers}, or fewer when this switch sums
     *                     only the workers it serves and sends the sum upstream (two-level aggregation).
     */
    SlotPool(final int slots, final int workers, final int contributors, final int lanesPerPacket)
    {
        this.contributors = contributors;
        this.lanesPerPacket = lanesPerPacket;
        this.bitmapWords = (workers + 63) >>> 6;
        final int copies = 2 * slots;
        used = new boolean[copies];
        round = new int[copies];
        count = new int[copies];
        seen = new long[copies * bitmapWords];
        exponent = new byte[copies];
        lanes = new int[copies];
        sum = new int[copies * lanesPerPacket];
    }

    /**
     * Register action on the (round, count) pair: a copy that was never used, or whose round is complete and older,
     * starts a new round; a packet of the copy's round finds it open (it may contribute, if its lane count matches) or
     * complete (it may only be answered: a complete round never takes another contribution, even from a worker whose
     * seen bit was since cleared, so a late duplicate cannot be added twice); older rounds are stale; a newer round
     * while the copy is incomplete is a protocol violation. Sequences compare as serial numbers. A {@code laneCount}
     * of {@link #NO_LANE_COUNT} (a header-only ALL_GATHER contribution) starts a round with no lanes yet and is never
     * a size mismatch.
     */
    int roundAction(final int copyIndex, final int sequence, final int laneCount)
    {
        final int age = sequence - round[copyIndex];
        if (!used[copyIndex] || (age > 0 && count[copyIndex] == contributors))
        {
            used[copyIndex] = true;
            round[copyIndex] = sequence;
            count[copyIndex] = 0;
            lanes[copyIndex] = Math.max(0, laneCount);
            return ROUND_NEW;
        }
        if (age == 0)
        {
            if (count[copyIndex] == contributors)
            {
                return ROUND_COMPLETE;
            }
            return laneCount == NO_LANE_COUNT || lanes[copyIndex] == laneCount ? ROUND_OPEN : ROUND_BAD_SIZE;
        }
        return age < 0 ? ROUND_STALE : ROUND_VIOLATION;
    }

    /**
     * Register action on the bitmaps: sets worker {@code w}'s bit in this copy and returns its old value; on a fresh
     * contribution also clears the worker's bit in the other copy (the worker has the other copy's result, so its
     * next round there starts clean), as SwitchML does.
     */
    boolean seenAction(final int copyIndex, final int worker)
    {
        final int word = copyIndex * bitmapWords + (worker >>> 6);
        final long bit = 1L << worker;
        final boolean old = (seen[word] & bit) != 0;
        if (!old)
        {
            seen[word] |= bit;
            seen[(copyIndex ^ 1) * bitmapWords + (worker >>> 6)] &= ~bit;
        }
        return old;
    }

    /** Register action on the count: one more contributor; returns the new count. */
    int countAction(final int copyIndex)
    {
        return ++count[copyIndex];
    }

    int count(final int copyIndex)
    {
        return count[copyIndex];
    }

    /**
     * Register actions on the lanes: the first contributor writes, the others combine with {@code op}
     * ({@link InaggHeader#OP_SUM} wrapping int32 addition, {@link InaggHeader#OP_MIN} / {@link InaggHeader#OP_MAX}
     * signed int32 minimum / maximum).
     */
    void lanesAction(
        final int copyIndex, final boolean first, final int op, final MemorySegment m, final long lanesOffset,
        final int n)
    {
        final int base = copyIndex * lanesPerPacket;
        if (first)
        {
            LaneOps.store(sum, base, m, lanesOffset, n);
        }
        else
        {
            LaneOps.combine(sum, base, op, m, lanesOffset, n);
        }
    }

    /**
     * Register actions of an ALL_GATHER round on its owner's contribution: the round's lane count and the owner's lanes,
     * stored as they are whenever the owner's packet comes (first or last of the round).
     */
    void gatherAction(final int copyIndex, final MemorySegment m, final long lanesOffset, final int n)
    {
        lanes[copyIndex] = n;
        LaneOps.store(sum, copyIndex * lanesPerPacket, m, lanesOffset, n);
    }

    /** Register action on the exponent: the first contributor writes, the others max-reduce. */
    void exponentAction(final int copyIndex, final boolean first, final int nextExponent)
    {
        if (first || nextExponent > exponent[copyIndex])
        {
            exponent[copyIndex] = (byte)nextExponent;
        }
    }

    int exponent(final int copyIndex)
    {
        return exponent[copyIndex];
    }

    int lanes(final int copyIndex)
    {
        return lanes[copyIndex];
    }

    /** Writes the copy's lane sums big-endian at {@code lanesOffset}. */
    void readLanes(final int copyIndex, final MemorySegment m, final long lanesOffset)
    {
        LaneOps.write(sum, copyIndex * lanesPerPacket, m, lanesOffset, lanes[copyIndex]);
    }
}
