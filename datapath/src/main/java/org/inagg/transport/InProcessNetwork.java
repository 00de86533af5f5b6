package org.inagg.transport;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * Endpoints in one process joined by lock-free rings: each endpoint has an inbox (an Agrona many-to-one ring buffer)
 * that every other endpoint writes into. An endpoint's peer numbers are the other endpoints' indices. A full inbox
 * makes {@link Transport#claim} fail, which the protocol treats like a full NIC queue.
 */
public final class InProcessNetwork
{
    private final RingBuffer[] inboxes;
    private final int maxMessageLength;

    /**
     * @param endpoints        number of endpoints.
     * @param inboxBytes       capacity of each inbox, a power of two.
     * @param maxMessageLength largest message in bytes.
     */
    public InProcessNetwork(final int endpoints, final int inboxBytes, final int maxMessageLength)
    {
        this(filled(endpoints, inboxBytes), maxMessageLength);
    }

    /**
     * @param inboxBytes       capacity of each endpoint's inbox, powers of two (a switch needs more than a worker).
     * @param maxMessageLength largest message in bytes.
     */
    public InProcessNetwork(final int[] inboxBytes, final int maxMessageLength)
    {
        if (inboxBytes.length < 1)
        {
            throw new IllegalArgumentException("an in-process network needs at least one endpoint");
        }
        this.maxMessageLength = maxMessageLength;
        inboxes = new RingBuffer[inboxBytes.length];
        for (int i = 0; i < inboxBytes.length; i++)
        {
            if (Integer.bitCount(inboxBytes[i]) != 1)
            {
                throw new IllegalArgumentException("inbox capacity must be a power of two, got " + inboxBytes[i]);
            }
            final ByteBuffer memory = BufferUtil.allocateDirectAligned(
                inboxBytes[i] + RingBufferDescriptor.TRAILER_LENGTH, 64);
            inboxes[i] = new ManyToOneRingBuffer(new UnsafeBuffer(memory));
            if (maxMessageLength > inboxes[i].maxMsgLength())
            {
                throw new IllegalArgumentException("inbox of " + inboxBytes[i] + " bytes cannot hold a "
                    + maxMessageLength + "-byte message; use a larger inbox");
            }
        }
    }

    private static int[] filled(final int endpoints, final int inboxBytes)
    {
        final int[] sizes = new int[Math.max(0, endpoints)];
        java.util.Arrays.fill(sizes, inboxBytes);
        return sizes;
    }

    public int endpoints()
    {
        return inboxes.length;
    }

    /** A transport sending from, and receiving at, endpoint {@code index}. */
    public Transport endpoint(final int index)
    {
        return new InProcessTransport(this, index);
    }

    RingBuffer inbox(final int index)
    {
        return inboxes[index];
    }

    int maxMessageLength()
    {
        return maxMessageLength;
    }
}
