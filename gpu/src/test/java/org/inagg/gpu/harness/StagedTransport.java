package org.inagg.gpu.harness;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;

/**
 * Wraps the switch's transport so every message is written into private staging memory and copied into the real
 * claim on commit. Works around a bug of {@code SoftwareSwitch.multicastResult} (p4 module): it builds a result in the
 * first worker's claim, commits it, then copies that already-committed message for the other workers; over the
 * in-process transport the first worker may consume (and the ring zero) it in between, so later workers receive zeros
 * or a malformed header. With staging, the "built" message lives in memory only the switch touches. Disable it with
 * -Dinagg.gpu.fabric.staging=false (as {@code Int32Soak} does by default) to reproduce the bug.
 */
final class StagedTransport implements Transport
{
    private final Transport delegate;
    private final MemorySegment staging;
    private long realOffset = CLAIM_FAILED;
    private int length;

    StagedTransport(final Transport delegate)
    {
        this.delegate = delegate;
        this.staging = Arena.ofAuto().allocate(delegate.maxMessageLength(), 64);
    }

    @Override
    public int maxMessageLength()
    {
        return delegate.maxMessageLength();
    }

    @Override
    public MemorySegment txMemory()
    {
        return staging;
    }

    @Override
    public long claim(final int peer, final int messageLength)
    {
        realOffset = delegate.claim(peer, messageLength);
        if (realOffset == CLAIM_FAILED)
        {
            return CLAIM_FAILED;
        }
        length = messageLength;
        return 0;
    }

    @Override
    public void commit()
    {
        MemorySegment.copy(staging, 0, delegate.txMemory(), realOffset, length);
        delegate.commit();
        realOffset = CLAIM_FAILED;
    }

    @Override
    public void abort()
    {
        delegate.abort();
        realOffset = CLAIM_FAILED;
    }

    @Override
    public int flush()
    {
        return delegate.flush();
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        return delegate.poll(handler, limit);
    }

    @Override
    public String describePeer(final int peer)
    {
        return delegate.describePeer(peer);
    }

    @Override
    public void close()
    {
        delegate.close();
    }
}
