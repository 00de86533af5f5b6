package org.inagg.transport;

import java.lang.foreign.MemorySegment;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.ringbuffer.RingBuffer;

/**
 * One endpoint of an {@link InProcessNetwork}. A message is written straight into the receiver's ring (claim, write,
 * commit); the ring's message type carries the sender's index plus one (types must be positive). Counts
 * ({@link TransportCounters}) messages and bytes each way and claims a full ring refused.
 */
final class InProcessTransport implements Transport, MessageHandler
{
    private final InProcessNetwork network;
    private final int self;
    private final RingBuffer inbox;
    private RingBuffer claimedRing;
    private int claimedIndex;
    private int claimedLength;
    private TransportCounters counters = TransportCounters.inMemory();
    private org.inagg.transport.MessageHandler handler;

    InProcessTransport(final InProcessNetwork network, final int self)
    {
        if (self < 0 || self >= network.endpoints())
        {
            throw new IllegalArgumentException("endpoint " + self + " is not in 0.." + (network.endpoints() - 1));
        }
        this.network = network;
        this.self = self;
        this.inbox = network.inbox(self);
    }

    @Override
    public int maxMessageLength()
    {
        return network.maxMessageLength();
    }

    @Override
    public MemorySegment txMemory()
    {
        return NativeMemory.ALL;
    }

    @Override
    public long claim(final int peer, final int length)
    {
        if (peer < 0 || peer >= network.endpoints() || length > network.maxMessageLength())
        {
            return CLAIM_FAILED;
        }
        final RingBuffer ring = network.inbox(peer);
        final int index = ring.tryClaim(self + 1, length);
        if (index < 0)
        {
            counters.increment(TransportCounter.CLAIMS_REFUSED);
            return CLAIM_FAILED;
        }
        claimedRing = ring;
        claimedIndex = index;
        claimedLength = length;
        return NativeMemory.address(ring.buffer(), index);
    }

    @Override
    public void commit()
    {
        claimedRing.commit(claimedIndex);
        claimedRing = null;
        counters.sent(claimedLength);
    }

    @Override
    public void abort()
    {
        claimedRing.abort(claimedIndex);
        claimedRing = null;
    }

    @Override
    public int flush()
    {
        return 0;
    }

    @Override
    public int poll(final org.inagg.transport.MessageHandler handler, final int limit)
    {
        this.handler = handler;
        return inbox.read(this, limit);
    }

    @Override
    public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        counters.received(length);
        handler.onMessage(NativeMemory.ALL, NativeMemory.address((AtomicBuffer)buffer, index), length, msgTypeId - 1);
    }

    @Override
    public TransportCounters counters()
    {
        return counters;
    }

    @Override
    public void countInto(final TransportCounters into)
    {
        counters.addTo(into);
        counters = into;
    }

    @Override
    public String describePeer(final int peer)
    {
        return "in-process endpoint " + peer;
    }

    @Override
    public void close()
    {
    }
}
