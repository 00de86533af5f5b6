package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.inagg.wire.InaggHeader;

/**
 * One entry of a job's block table: a block being merged (OPEN: sum and bitmap) or a completed one kept to answer
 * retransmissions (DONE: the result lanes). Entries are allocated on first use and reused for every later
 * sequence that maps to them, so a warm server allocates nothing per packet.
 */
final class ServerBlock
{
    /** Entry states of a job's block table. */
    static final int FREE = 0;
    static final int OPEN = 1;
    static final int DONE = 2;
    /** The Flags bits a block keeps from its packets and puts in its result. */
    static final int KEPT_FLAGS = InaggHeader.FLAG_INT32 | InaggHeader.COLLECTIVE_MASK | InaggHeader.OP_MASK;
    /**
     * First-level switches a block's result goes down through, at most: the workers of a PARTIAL past them get it from
     * the server directly, as from a switch that does not ask ({@link EsaWire#FLAG_RESULTS_DOWN}).
     */
    static final int MAX_SUBTREES = 64;
    /** {@link #ownerSubtree} when no subtree holds the Owner. */
    static final int NO_PEER = -1;

    final int[] bits;
    int[] lanes;
    int sequence;
    int state = FREE;
    int laneCount;
    /** INT32, the collective and the reduce op of the block's packets (an AGGREGATE's Flags bits). */
    int flags;
    /** The Owner of a REDUCE_SCATTER or ALL_GATHER block (0 for ALL_REDUCE). */
    int owner;
    int slotField;
    int blockExponent;
    int nextExponent;
    int count;
    /** Workers whose result goes down through a first-level switch (in {@link #subtrees}), not from the server. */
    final int[] down;
    /** Peers of the switches that asked for their workers' result once, allocated on the first that asks. */
    int[] subtrees;
    int subtreeCount;
    /** The subtree whose PARTIAL holds a REDUCE_SCATTER block's Owner (its result carries the lanes), or NO_PEER. */
    int ownerSubtree;

    ServerBlock(final int words, final int lanes)
    {
        this.bits = new int[words];
        this.down = new int[words];
        this.lanes = new int[lanes];
    }

    int collective()
    {
        return (flags & InaggHeader.COLLECTIVE_MASK) >>> InaggHeader.COLLECTIVE_SHIFT;
    }

    /** Room for {@code n} lanes: an ALL_GATHER block opened by a header-only packet learns its lane count late. */
    void ensureLanes(final int n)
    {
        if (lanes.length < n)
        {
            lanes = Arrays.copyOf(lanes, n);
        }
    }

    void open(final int sequence, final int laneCount, final int flags, final int slotField,
        final int blockExponent, final int owner)
    {
        this.sequence = sequence;
        this.state = OPEN;
        if (lanes.length < laneCount)
        {
            lanes = new int[laneCount];
        }
        Arrays.fill(lanes, 0, laneCount, 0);
        Arrays.fill(bits, 0);
        this.laneCount = laneCount;
        this.flags = flags & KEPT_FLAGS;
        this.owner = owner;
        this.slotField = slotField;
        this.blockExponent = blockExponent;
        this.nextExponent = InaggHeader.NO_EXPONENT;
        this.count = 0;
        Arrays.fill(down, 0);
        this.subtreeCount = 0;
        this.ownerSubtree = NO_PEER;
    }

    /**
     * Notes that the result of a merged PARTIAL's workers goes once to its sender, {@code peer}, which relays it to
     * them; past {@link #MAX_SUBTREES} switches (allocated once, on first use) they get it from the server instead.
     */
    void sendDownTo(final int peer, final MemorySegment partial, final long o)
    {
        if (subtrees == null)
        {
            subtrees = new int[MAX_SUBTREES];
        }
        boolean known = false;
        for (int i = 0; i < subtreeCount; i++)
        {
            known |= subtrees[i] == peer;
        }
        if (!known)
        {
            if (subtreeCount == subtrees.length)
            {
                return;
            }
            subtrees[subtreeCount++] = peer;
        }
        for (int k = 0; k < down.length; k++)
        {
            down[k] |= EsaWire.partialBitmapWord(partial, o, k);
        }
        if (collective() == InaggHeader.COLLECTIVE_REDUCE_SCATTER && EsaWire.partialHasWorker(partial, o, owner))
        {
            ownerSubtree = peer;
        }
    }
}


