package org.inagg.transport;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * The messages a {@link UdpTransport} has committed and not sent yet, in order: {@code capacity} slots of
 * {@code slotBytes} in one direct buffer (its {@link #memory} is the transport's transmit memory), each with the peer
 * it goes to and its length. Entries {@link #head}..{@link #tail}-1 wait; a {@link DatagramIo} sends from the head and
 * {@link #sent} or {@link #compact} the rest. Fields are open to the transport's package: this is its queue, walked on
 * the per-packet path.
 */
final class SendQueue
{
    final MemorySegment memory;
    final ByteBuffer[] slots;
    final int slotBytes;
    final int[] peer;
    final int[] length;
    int head;
    int tail;

    SendQueue(final int capacity, final int slotBytes)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(capacity * slotBytes);
        this.memory = MemorySegment.ofBuffer(buffer);
        this.slotBytes = slotBytes;
        this.slots = new ByteBuffer[capacity];
        for (int i = 0; i < capacity; i++)
        {
            slots[i] = buffer.slice(i * slotBytes, slotBytes);
        }
        this.peer = new int[capacity];
        this.length = new int[capacity];
    }

    int capacity()
    {
        return slots.length;
    }

    boolean isFull()
    {
        return tail == slots.length;
    }

    boolean isEmpty()
    {
        return head == tail;
    }

    /** Offset in {@link #memory} of the next slot to fill. */
    long nextOffset()
    {
        return (long)tail * slotBytes;
    }

    void add(final int toPeer, final int messageLength)
    {
        peer[tail] = toPeer;
        length[tail] = messageLength;
        tail++;
    }

    /** Everything was sent (or dropped): the queue starts again at slot 0. */
    void clear()
    {
        head = 0;
        tail = 0;
    }
}
