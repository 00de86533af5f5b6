package org.inagg.transport;

import java.lang.foreign.MemorySegment;

/**
 * A transport that decorates another ({@link FaultInjectingTransport}, {@code capture.PcapTransport}): every call
 * passes to the inner transport unless the decorator overrides it, so that what a decorator does not change (the
 * source pinning of {@link Transport#claimedPeer}, say) reaches the transport beneath however many are stacked.
 */
public abstract class TransportDecorator implements Transport
{
    protected final Transport inner;

    protected TransportDecorator(final Transport inner)
    {
        this.inner = inner;
    }

    @Override
    public int maxMessageLength()
    {
        return inner.maxMessageLength();
    }

    @Override
    public MemorySegment txMemory()
    {
        return inner.txMemory();
    }

    @Override
    public long claim(final int peer, final int length)
    {
        return inner.claim(peer, length);
    }

    @Override
    public void commit()
    {
        inner.commit();
    }

    @Override
    public void abort()
    {
        inner.abort();
    }

    @Override
    public int flush()
    {
        return inner.flush();
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        return inner.poll(handler, limit);
    }

    @Override
    public boolean awaitReceive(final long timeoutNs)
    {
        return inner.awaitReceive(timeoutNs);
    }

    @Override
    public int claimedPeer(final int peer)
    {
        return inner.claimedPeer(peer);
    }

    @Override
    public boolean isPinned(final int peer)
    {
        return inner.isPinned(peer);
    }

    @Override
    public boolean pin(final int unpinnedPeer)
    {
        return inner.pin(unpinnedPeer);
    }

    /** The inner transport's: what the link carried, before or after what the decorator does. */
    @Override
    public TransportCounters counters()
    {
        return inner.counters();
    }

    @Override
    public void countInto(final TransportCounters counters)
    {
        inner.countInto(counters);
    }

    @Override
    public String describePeer(final int peer)
    {
        return inner.describePeer(peer);
    }

    @Override
    public void close()
    {
        inner.close();
    }
}
