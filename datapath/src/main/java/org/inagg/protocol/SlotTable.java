package org.inagg.protocol;

import java.util.Arrays;

/**
 * The worker's view of the job's slots, a flyweight over parallel primitive arrays indexed by slot (no object per slot,
 * nothing allocated once sized at the join), and the queue of slots ready to send their next packet. A slot carries
 * one packet at a time per worker and alternates between two shadow copies, so the switch can still answer a
 * retransmission of round r from its copy while round r+1 fills the other.
 * <pre>
 *   slot s:  round      completed rounds; its low bit is the shadow copy the packet in flight uses
 *            packet     the packet in flight (position in the operation), or IDLE
 *            nextPacket the packet the slot sends when it leaves the ready queue
 *            retries    retransmissions of the packet in flight (the backoff exponent)
 *            sentNs     when the packet in flight was last sent
 *            stamp      the send order of that last send (order evidence for the loss detector)
 *            checkAtNs  when its loss check is due, or NO_CHECK
 *   ready:   the slots waiting to send, a binary min-heap by nextPacket: every worker sends its lowest ready packet
 *            first, so workers whose windows are cut hold the same packets in flight (in the order results came
 *            back, which differs between workers under loss, a cut window held packets the others had only queued,
 *            and the job moved one packet at a time, issue 23)
 * </pre>
 * Not thread safe: it belongs to the worker agent's thread.
 */
final class SlotTable
{
    /** The packet of a slot with nothing in flight. */
    static final int IDLE = -1;
    /** The check time of a slot without a loss check. */
    static final long NO_CHECK = Long.MAX_VALUE;

    private int[] round = new int[0];
    private int[] packet = new int[0];
    private int[] nextPacket = new int[0];
    private int[] retries = new int[0];
    private long[] sentNs = new long[0];
    private long[] stamp = new long[0];
    private long[] checkAtNs = new long[0];
    private int[] ready = new int[0];
    private int readyCount;
    private int outstanding;
    private int activeSlots;
    private int totalPackets;
    /** Every packet below it has its result here; moves up in {@link #lowestFirst}. */
    private int floor;

    /** Sizes the table for the job's pool (at the join): every slot idle, in round 0, without a check. */
    void resize(final int slots)
    {
        round = new int[slots];
        packet = new int[slots];
        nextPacket = new int[slots];
        retries = new int[slots];
        sentNs = new long[slots];
        stamp = new long[slots];
        checkAtNs = new long[slots];
        ready = new int[slots];
        Arrays.fill(packet, IDLE);
        Arrays.fill(checkAtNs, NO_CHECK);
    }

    /** A new operation of {@code totalPackets} packets over {@code activeSlots} slots: nothing ready or in flight. */
    void begin(final int activeSlots, final int totalPackets)
    {
        this.activeSlots = activeSlots;
        this.totalPackets = totalPackets;
        floor = 0;
        readyCount = 0;
        outstanding = 0;
    }

    /** Slots in the table (the job's pool). */
    int size()
    {
        return packet.length;
    }

    int packet(final int slot)
    {
        return packet[slot];
    }

    boolean idle(final int slot)
    {
        return packet[slot] == IDLE;
    }

    /** Whether a result of {@code packetNumber} in {@code copy} answers the slot's packet in flight. */
    boolean awaits(final int slot, final int packetNumber, final int copy, final int activeSlots)
    {
        // An idle slot takes no result: its marker (IDLE = -1) would match the packet of sequence base - 1 (fuzzing
        // finding: an out-of-bounds exponent write for floats; for int32 a slot sent another slot's packet).
        return slot < activeSlots && packet[slot] != IDLE && packet[slot] == packetNumber && (round[slot] & 1) == copy;
    }

    /** The shadow copy the slot's packet in flight uses. */
    int shadowCopy(final int slot)
    {
        return round[slot] & 1;
    }

    int retries(final int slot)
    {
        return retries[slot];
    }

    long sentNs(final int slot)
    {
        return sentNs[slot];
    }

    long stamp(final int slot)
    {
        return stamp[slot];
    }

    /** When the slot's loss check is due, {@link #NO_CHECK} for none. */
    long checkAtNs(final int slot)
    {
        return checkAtNs[slot];
    }

    void checkAtNs(final int slot, final long ns)
    {
        checkAtNs[slot] = ns;
    }

    /** The oldest packet in flight in slots {@code [0, activeSlots)}, {@code Integer.MAX_VALUE} if none. */
    int oldestInFlight(final int activeSlots)
    {
        int oldest = Integer.MAX_VALUE;
        for (int s = 0; s < activeSlots; s++)
        {
            if (packet[s] != IDLE)
            {
                oldest = Math.min(oldest, packet[s]);
            }
        }
        return oldest;
    }

    /** Packets sent and not yet answered. */
    int outstanding()
    {
        return outstanding;
    }

    /** A first send of {@code packetNumber} (it is now in flight) or a retransmission of the one in flight. */
    void onSent(final int slot, final int packetNumber, final long nowNs, final long sendStamp, final boolean retransmission)
    {
        sentNs[slot] = nowNs;
        stamp[slot] = sendStamp;
        if (retransmission)
        {
            retries[slot]++;
        }
        else
        {
            packet[slot] = packetNumber;
            retries[slot] = 0;
            outstanding++;
        }
    }

    /**
     * The result of the slot's packet came back: the slot is idle, done with the operation until {@link #enqueue}d
     * again, and its next round uses the other shadow copy.
     */
    void onCompleted(final int slot)
    {
        packet[slot] = IDLE;
        nextPacket[slot] = Integer.MAX_VALUE;
        outstanding--;
        round[slot]++;
    }

    /** Queues the slot to send {@code packetNumber} once the window lets it. */
    void enqueue(final int slot, final int packetNumber)
    {
        nextPacket[slot] = packetNumber;
        int at = readyCount++;
        while (at > 0)
        {
            final int parent = (at - 1) >>> 1;
            if (nextPacket[ready[parent]] <= packetNumber)
            {
                break;
            }
            ready[at] = ready[parent];
            at = parent;
        }
        ready[at] = slot;
    }

    int readyCount()
    {
        return readyCount;
    }

    /** The ready slot with the lowest next packet. */
    int readySlot()
    {
        return ready[0];
    }

    /** The packet {@link #readySlot} sends. */
    int readyPacket()
    {
        return nextPacket[ready[0]];
    }

    /** Takes {@link #readySlot} off the queue. */
    void dequeue()
    {
        final int last = ready[--readyCount];
        final int key = nextPacket[last];
        int at = 0;
        while (true)
        {
            int child = 2 * at + 1;
            if (child >= readyCount)
            {
                break;
            }
            if (child + 1 < readyCount && nextPacket[ready[child + 1]] < nextPacket[ready[child]])
            {
                child++;
            }
            if (key <= nextPacket[ready[child]])
            {
                break;
            }
            ready[at] = ready[child];
            at = child;
        }
        ready[at] = last;
    }

    /**
     * Whether the next ready packet is the lowest packet of the operation this worker still needs a result for; the
     * congestion window lets it out even when full. Windows of different sizes still hold different packets, so two
     * workers whose full windows each hold packets the other has only queued would wait for each other until the peer
     * timeout (issue 23). Every packet below the lowest one has its result, so it is complete at the switch, and the
     * lowest one completes once every worker sent it: the job always moves.
     * <p>
     * Its slot's {@code nextPacket} is that packet until it completes (then the slot's next packet, or
     * {@code Integer.MAX_VALUE}), so the floor moves up in amortised constant time.
     */
    boolean lowestFirst()
    {
        while (floor < totalPackets && nextPacket[floor % activeSlots] != floor)
        {
            floor++;
        }
        return floor < totalPackets && readyCount > 0 && nextPacket[ready[0]] == floor;
    }
}
