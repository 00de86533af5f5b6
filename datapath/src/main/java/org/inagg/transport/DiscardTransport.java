package org.inagg.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A transport to nowhere, for measuring or testing an agent alone: every claim lands in one scratch buffer, commits
 * are counted, nothing is ever received. Subclasses that want to see what was sent override {@link #commit()} and read
 * {@link #claimedPeer()}, {@link #claimedLength()} and {@link #txMemory()} at offset 0.
 */
public class DiscardTransport implements Transport
{
    private final MemorySegment scratch;
    private int claimedPeer;
    private int claimedLength;
    private long committed;

    /** @param maxMessageLength size of the scratch buffer, the largest message a claim accepts. */
    public DiscardTransport(final int maxMessageLength)
    {
        scratch = Arena.ofAuto().allocate(maxMessageLength, 64);
    }

    /** Messages committed so far. */
    public long committed()
    {
        return committed;
    }

    /** The peer of the last claim. */
    protected int claimedPeer()
    {
        return claimedPeer;
    }

    /** The length of the last claim. */
    protected int claimedLength()
    {
        return claimedLength;
    }

    @Override
    public int maxMessageLength()
    {
        return (int)scratch.byteSize();
    }

    @Override
    public MemorySegment txMemory()
    {
        return scratch;
    }

    @Override
    public long claim(final int peer, final int length)
    {
        if (length > scratch.byteSize())
        {
            return CLAIM_FAILED;
        }
        claimedPeer = peer;
        claimedLength = length;
        return 0;
    }

    @Override
    public void commit()
    {
        committed++;
    }

    @Override
    public void abort()
    {
    }

    @Override
    public int flush()
    {
        return 0;
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        return 0;
    }

    @Override
    public String describePeer(final int peer)
    {
        return "peer " + peer;
    }

    @Override
    public void close()
    {
    }
}
