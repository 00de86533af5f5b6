package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;

import org.inagg.p4.pipeline.LaneOps;
import org.inagg.wire.InaggHeader;

/**
 * The switch's one pool of aggregators, shared by every job: register arrays indexed by aggregator, each method one
 * register action (what a P4 stage would do on one register). An aggregator is free or held by one block, the key
 * (job, sequence).
 * <pre>
 *   aggregator i = index(job, sequence)
 *   job[i]        : int    holder's job id, FREE when the aggregator is free      (P4: key_reg, with seq)
 *   seq[i]        : int    holder's sequence                                      (P4: key_reg)
 *   prio[i]       : byte   holder's effective priority                            (P4: prio_reg)
 *   count[i]      : int    contributors so far                                    (P4: count_reg)
 *   seen[i][w]    : bit    worker w is in the sum                                 (P4: seen_reg, 32-bit words)
 *   acked[i]      : bit    ATP only: complete, waiting for the server's result    (P4: state bit in count_reg)
 *   exp[i]        : byte   max Next Exponent                                      (P4: exp_reg)
 *   hdr[i]        : lanes, slot field, INT32 flag, block exponent of the block   (P4: meta_reg, 48 bits)
 *   coll[i]       : collective, reduce op (Flags bits 3-6) and Owner of the block  (software switch only)
 *   sum[i][k]     : int32  lanes combined with the block's op                     (P4: lane_k registers)
 *   tomb[i]       : (job, seq) last block evicted from or diverted at i          (P4: tomb_reg, 48 bits)
 * </pre>
 * The index is {@code (sequence + job * 0x9E3779B1) mod N}: a hash of (job, sequence) that is linear in the sequence,
 * so a job's consecutive blocks take consecutive aggregators and collide with themselves only when more than N of them
 * are in flight, while the golden-ratio multiplier scatters the jobs' starting points over the pool. The full key is
 * stored and compared, so two blocks hashing to one aggregator are never confused.
 * <p>
 * Lanes combine with the packet's reduce op as the slot switch's do (docs/wire-format.md, "Collectives and reduce
 * ops"); an ALL_GATHER block holds its Owner's lanes as they came, and its header-only contributions neither set nor
 * check its lane count ({@link #lanesMatch}).
 */
final class AggregatorPool
{
    static final int FREE = -1;
    private static final int JOB_MULTIPLIER = 0x9E3779B1;

    private final int size;
    private final int lanesPerAggregator;
    private final int words;
    private final int[] job;
    private final int[] seq;
    private final int[] prio;
    private final int[] count;
    private final boolean[] acked;
    private final long[] seen;
    private final byte[] exponent;
    private final int[] lanes;
    private final int[] slotField;
    private final int[] flags;
    private final int[] owner;
    private final byte[] blockExponent;
    private final int[] sum;
    private final int[] tombJob;
    private final int[] tombSeq;

    AggregatorPool(final int size, final int maxWorkers, final int lanesPerAggregator)
    {
        this.size = size;
        this.lanesPerAggregator = lanesPerAggregator;
        this.words = (maxWorkers + 63) >>> 6;
        job = new int[size];
        seq = new int[size];
        prio = new int[size];
        count = new int[size];
        acked = new boolean[size];
        seen = new long[size * words];
        exponent = new byte[size];
        lanes = new int[size];
        slotField = new int[size];
        flags = new int[size];
        owner = new int[size];
        blockExponent = new byte[size];
        sum = new int[size * lanesPerAggregator];
        tombJob = new int[size];
        tombSeq = new int[size];
        java.util.Arrays.fill(job, FREE);
        java.util.Arrays.fill(tombJob, FREE);
    }

    int size()
    {
        return size;
    }

    int lanesPerAggregator()
    {
        return lanesPerAggregator;
    }

    int index(final int jobId, final int sequence)
    {
        return Integer.remainderUnsigned(sequence + jobId * JOB_MULTIPLIER, size);
    }

    boolean isFree(final int i)
    {
        return job[i] == FREE;
    }

    boolean holds(final int i, final int jobId, final int sequence)
    {
        return job[i] == jobId && seq[i] == sequence;
    }

    boolean isTombstoned(final int i, final int jobId, final int sequence)
    {
        return tombJob[i] == jobId && tombSeq[i] == sequence;
    }

    int holderJob(final int i)
    {
        return job[i];
    }

    int holderSequence(final int i)
    {
        return seq[i];
    }

    int holderPriority(final int i)
    {
        return prio[i];
    }

    boolean acked(final int i)
    {
        return acked[i];
    }

    void markAcked(final int i)
    {
        acked[i] = true;
    }

    int count(final int i)
    {
        return count[i];
    }

    int lanes(final int i)
    {
        return lanes[i];
    }

    int exponent(final int i)
    {
        return exponent[i];
    }

    int slotField(final int i)
    {
        return slotField[i];
    }

    int flags(final int i)
    {
        return flags[i];
    }

    /** The Owner of a REDUCE_SCATTER or ALL_GATHER block (0 for ALL_REDUCE). */
    int owner(final int i)
    {
        return owner[i];
    }

    int collective(final int i)
    {
        return (flags[i] & InaggHeader.COLLECTIVE_MASK) >>> InaggHeader.COLLECTIVE_SHIFT;
    }

    /**
     * Whether a packet of {@code laneCount} lanes fits aggregator i's block: the same lane count, or an ALL_GATHER
     * block, whose lanes are its Owner's alone (the packet's own lane rule is checked before).
     */
    boolean lanesMatch(final int i, final int laneCount)
    {
        return collective(i) == InaggHeader.COLLECTIVE_ALL_GATHER || lanes[i] == laneCount;
    }

    int blockExponent(final int i)
    {
        return blockExponent[i];
    }

    /** Takes aggregator i for the packet's block with the packet as its first contribution. */
    void allocate(
        final int i, final int jobId, final int priority, final int worker, final MemorySegment m, final long o)
    {
        job[i] = jobId;
        seq[i] = InaggHeader.sequence(m, o);
        prio[i] = priority;
        count[i] = 1;
        acked[i] = false;
        final int base = i * words;
        for (int k = 0; k < words; k++)
        {
            seen[base + k] = 0;
        }
        seen[base + (worker >>> 6)] = 1L << worker;
        final int n = InaggHeader.elementCount(m, o);
        lanes[i] = n;
        slotField[i] = InaggHeader.slotField(m, o);
        flags[i] = InaggHeader.flags(m, o)
            & (InaggHeader.FLAG_INT32 | InaggHeader.COLLECTIVE_MASK | InaggHeader.OP_MASK);
        owner[i] = InaggHeader.collective(m, o) == InaggHeader.COLLECTIVE_ALL_REDUCE ? 0 : InaggHeader.owner(m, o);
        blockExponent[i] = (byte)InaggHeader.blockExponent(m, o);
        exponent[i] = (byte)InaggHeader.nextExponent(m, o);
        LaneOps.store(sum, i * lanesPerAggregator, m, o + InaggHeader.PAYLOAD_OFFSET, n);
    }

    /** Sets worker w's bit; returns its old value (true: a duplicate, nothing else changes). */
    boolean seenAction(final int i, final int worker)
    {
        final int word = i * words + (worker >>> 6);
        final long bit = 1L << worker;
        final boolean old = (seen[word] & bit) != 0;
        seen[word] |= bit;
        return old;
    }

    /** Adds a fresh contribution (its seen bit already set); returns the new count. */
    int contribute(final int i, final MemorySegment m, final long o)
    {
        final long lanesOffset = o + InaggHeader.PAYLOAD_OFFSET;
        if (collective(i) != InaggHeader.COLLECTIVE_ALL_GATHER)
        {
            LaneOps.combine(sum, i * lanesPerAggregator, InaggHeader.reduceOp(m, o), m, lanesOffset, lanes[i]);
        }
        else if (InaggHeader.elementCount(m, o) > 0)
        {
            // The Owner's lanes, whenever they come (the block may have been allocated by a header-only packet).
            lanes[i] = InaggHeader.elementCount(m, o);
            LaneOps.store(sum, i * lanesPerAggregator, m, lanesOffset, lanes[i]);
        }
        final int next = InaggHeader.nextExponent(m, o);
        if (next > exponent[i])
        {
            exponent[i] = (byte)next;
        }
        return ++count[i];
    }

    /** Frees aggregator i; with {@code tombstone} the released block is remembered so its stragglers skip the pool. */
    void release(final int i, final boolean tombstone)
    {
        if (tombstone)
        {
            tombJob[i] = job[i];
            tombSeq[i] = seq[i];
        }
        job[i] = FREE;
        acked[i] = false;
    }

    /** Remembers a block diverted to the server at aggregator i, so that its later packets follow it there. */
    void tombstone(final int i, final int jobId, final int sequence)
    {
        tombJob[i] = jobId;
        tombSeq[i] = sequence;
    }

    /** Frees every aggregator (and tombstone) of a job, as the control plane does when the job goes. */
    void releaseJob(final int jobId)
    {
        for (int i = 0; i < size; i++)
        {
            if (job[i] == jobId)
            {
                job[i] = FREE;
            }
            if (tombJob[i] == jobId)
            {
                tombJob[i] = FREE;
            }
        }
    }

    /** 32-bit bitmap word {@code k} of aggregator i (wire order: bit w mod 32 of word w / 32). */
    int bitmapWord(final int i, final int k)
    {
        return (int)(seen[i * words + (k >>> 1)] >>> ((k & 1) << 5));
    }

    /** Writes aggregator i's lane sums big-endian at {@code lanesOffset}. */
    void readLanes(final int i, final MemorySegment m, final long lanesOffset)
    {
        LaneOps.write(sum, i * lanesPerAggregator, m, lanesOffset, lanes[i]);
    }
}
