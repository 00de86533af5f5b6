package org.inagg.protocol;

import java.lang.foreign.MemorySegment;

import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.wire.InaggHeader;

/**
 * Which packet carries what in one operation, and the block exponents the packets negotiate.
 * <h2>Packet stream</h2>
 * A tensor of L elements is cut into B = ceil(L / N) blocks of N lanes (N from the switch). With A = min(slots, B)
 * slots in use, a float all-reduce sends B + A packets numbered v = 0 .. B+A-1; packet v uses slot {@code v mod A},
 * carries the lanes of block {@code v - A} (none when v &lt; A) scaled with that block's agreed exponent, and the
 * worker's local exponent of block v in Next Exponent. The switch max-reduces Next Exponent with the sums, so the
 * result of packet v tells every worker the agreed exponent of block v just before the slot is reused for it: the
 * exponent negotiation costs A extra exponent-only packets per tensor (one extra round trip), not one per block. Int32
 * all-reduces need no exponents and send packet v = block v.
 * <pre>
 *   packet v:  slot v mod A, sequence base + v (the job's whole stream), next packet of its slot v + A
 *              block v - lead (none while v &lt; lead; lead = A for fixed point, 0 otherwise)
 *              Block Exponent = agreed exponent of block v - lead; Next Exponent = local exponent of block v
 * </pre>
 * The sequence number is the packet's position in the job's whole stream, so late duplicates of older rounds are
 * recognised and ignored. Exponents are computed for every block before any packet leaves.
 * <h2>Collectives</h2>
 * An operation may be a REDUCE_SCATTER or an ALL_GATHER over parts each owned by a worker, and a SUM, MIN or MAX
 * (docs/wire-format.md, "Collectives and reduce ops"); its blocks are cut per part ({@link BlockSchedule}) and each
 * packet names its block's Owner. A REDUCE_SCATTER streams like an all-reduce (float SUM with the same exponents and
 * lanes, so the owned parts hold the all-reduce's bits) but only the Owner's result carries lanes: the others free the
 * slot and learn the next exponent from a header-only result. An ALL_GATHER sends the owned blocks' raw bits as INT32
 * lanes and header-only packets for the others, and writes every result. Float MIN and MAX travel as
 * {@link OrderedKeys}; whatever is not float SUM travels as INT32, with no exponents and no lead packets.
 * <p>
 * Not thread safe: it belongs to the worker agent's thread. The exponent arrays grow to the largest operation, then
 * nothing is allocated.
 */
final class PacketSchedule
{
    private final BlockSchedule blocks = new BlockSchedule();
    private boolean fixedPoint;
    private int blockCount;
    private int activeSlots;
    private int lead;
    private int totalPackets;
    private int completedPackets;
    /** The sequence number of this operation's packet 0: the packets of all earlier operations of the job. */
    private int base;
    private byte[] localExponent = new byte[0];
    private byte[] agreedExponent = new byte[0];

    /** Cuts the operation into blocks of at most {@code lanes}; returns the number of blocks. */
    int cut(final AllReduceOperation op, final int lanes)
    {
        blocks.reset(op.parts(), op.partElements(), lanes);
        return blocks.blocks();
    }

    /**
     * Checks the operation just {@link #cut} before any packet leaves: computes the local exponent of every block of a
     * fixed-point one; a float MIN or MAX takes finite values only.
     *
     * @return -1, or the index of the first element that is NaN or infinite (then nothing may be sent).
     */
    long prepare(final AllReduceOperation op, final FixedPointConverter converter)
    {
        if (op.fixedPoint())
        {
            return computeExponents(op, converter);
        }
        return op.orderedKeys() ? OrderedKeys.firstNonFinite(op.source(), 0, op.elements()) : -1;
    }

    private long computeExponents(final AllReduceOperation op, final FixedPointConverter converter)
    {
        final int count = blocks.blocks();
        if (localExponent.length < count)
        {
            localExponent = new byte[count];
        }
        final MemorySegment source = op.source();
        for (int b = 0; b < count; b++)
        {
            final int length = blocks.length(b);
            final long first = blocks.element(b);
            final long offset = first * Float.BYTES;
            final int exponent = op.sourceArray() != null
                ? converter.blockExponent(op.sourceArray(), op.sourceIndex() + (int)first, length)
                : converter.blockExponent(source, offset, length);
            if (exponent == FixedPoint.NON_FINITE)
            {
                return first + FixedPointConverter.firstNonFinite(source, offset, length);
            }
            localExponent[b] = (byte)exponent;
        }
        return -1;
    }

    /** Starts streaming the operation just {@link #cut} through {@code slots} slots. */
    void begin(final boolean fixedPointLanes, final int slots)
    {
        fixedPoint = fixedPointLanes;
        blockCount = blocks.blocks();
        activeSlots = Math.min(slots, blockCount);
        lead = fixedPoint ? activeSlots : 0;
        totalPackets = blockCount + lead;
        completedPackets = 0;
        if (agreedExponent.length < blockCount)
        {
            agreedExponent = new byte[blockCount];
        }
    }

    /** The operation is done: the next one's sequence numbers follow its packets. */
    void end()
    {
        base += totalPackets;
    }

    boolean fixedPoint()
    {
        return fixedPoint;
    }

    int activeSlots()
    {
        return activeSlots;
    }

    int totalPackets()
    {
        return totalPackets;
    }

    int completedPackets()
    {
        return completedPackets;
    }

    /** Counts a completed packet; returns whether it was the operation's last. */
    boolean complete()
    {
        return ++completedPackets == totalPackets;
    }

    int sequence(final int packet)
    {
        return base + packet;
    }

    /** The packet a sequence number names (outside {@code [0, totalPackets)} for another operation's). */
    int packet(final int sequence)
    {
        return sequence - base;
    }

    /** The block whose lanes a packet carries; negative for an exponent-only lead packet. */
    int block(final int packet)
    {
        return packet - lead;
    }

    /** The packet its slot sends after {@code packet}, or -1 when the slot is done with this operation. */
    int nextOf(final int packet)
    {
        final int next = packet + activeSlots;
        return next < totalPackets ? next : -1;
    }

    /** Lanes of {@code block}. */
    int length(final int block)
    {
        return blocks.length(block);
    }

    /** First element of {@code block} in the whole source tensor. */
    long element(final int block)
    {
        return blocks.element(block);
    }

    /** First element of {@code block} in the destination: its part's place there. */
    long destinationElement(final AllReduceOperation op, final int block)
    {
        return (long)op.destinationPart(blocks.part(block)) * op.partElements() + blocks.offsetInPart(block);
    }

    /** The Owner a packet names: its block's, or for an exponent-only lead packet the block it negotiates. */
    int owner(final AllReduceOperation op, final int packet, final int block)
    {
        return op.partOwner(blocks.part(block >= 0 ? block : packet));
    }

    /** Lanes a packet of {@code block} carries from this worker: an ALL_GATHER's come from the block's Owner alone. */
    int lanesSent(final int collective, final int block, final int owner, final int worker)
    {
        return block < 0 || (collective == InaggHeader.COLLECTIVE_ALL_GATHER && owner != worker) ? 0 : length(block);
    }

    /** Lanes the result of {@code packet} brings this worker: a REDUCE_SCATTER's go to the block's Owner alone. */
    int lanesReceived(final AllReduceOperation op, final int packet, final int block, final int worker)
    {
        return block < 0 || (op.collective() == InaggHeader.COLLECTIVE_REDUCE_SCATTER
            && owner(op, packet, block) != worker) ? 0 : length(block);
    }

    /** Whether the result of {@code packet} brings an agreed exponent (that of block {@code packet}). */
    boolean bringsExponent(final int packet)
    {
        return fixedPoint && packet < blockCount;
    }

    /** The Block Exponent a packet carrying {@code block} is scaled with. */
    int blockExponent(final int block)
    {
        return fixedPoint && block >= 0 ? agreedExponent[block] : 0;
    }

    /** The Next Exponent a packet offers: this worker's exponent of block {@code packet}. */
    int nextExponent(final int packet)
    {
        return bringsExponent(packet) ? localExponent[packet] : InaggHeader.NO_EXPONENT;
    }

    /** The switch's answer to {@code packet}: the agreed exponent of block {@code packet}. */
    void agree(final int packet, final int exponent)
    {
        agreedExponent[packet] = (byte)exponent;
    }
}
