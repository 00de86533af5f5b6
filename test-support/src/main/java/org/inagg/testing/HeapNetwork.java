package org.inagg.testing;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;

import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;

/**
 * Endpoints in one thread joined by queues of byte arrays, for harnesses that drive every agent's duty cycle in turn
 * (fuzz tests): deterministic, and each message is handed up in memory of exactly its length, so a receiver that reads
 * past a message throws instead of reading whatever lies behind it (the in-process rings would let it). An endpoint's
 * peers are the other endpoints' indices, as in {@code InProcessNetwork}.
 */
public final class HeapNetwork
{
    private record Message(int from, byte[] bytes)
    {
    }

    private final ArrayDeque<Message>[] inboxes;
    private final int maxMessageLength;

    @SuppressWarnings("unchecked")
    public HeapNetwork(final int endpoints, final int maxMessageLength)
    {
        this.inboxes = new ArrayDeque[endpoints];
        for (int i = 0; i < endpoints; i++)
        {
            inboxes[i] = new ArrayDeque<>();
        }
        this.maxMessageLength = maxMessageLength;
    }

    /** Forgets every message not yet received, so that a network can serve run after run. */
    public void clear()
    {
        for (final ArrayDeque<Message> inbox : inboxes)
        {
            inbox.clear();
        }
    }

    public Transport endpoint(final int index)
    {
        return new Endpoint(index);
    }

    private final class Endpoint implements Transport
    {
        private final int self;
        private final MemorySegment scratch;
        private int claimedPeer = -1;
        private int claimedLength;

        Endpoint(final int self)
        {
            this.self = self;
            this.scratch = MemorySegment.ofArray(new byte[maxMessageLength]);
        }

        @Override
        public int maxMessageLength()
        {
            return maxMessageLength;
        }

        @Override
        public MemorySegment txMemory()
        {
            return scratch;
        }

        @Override
        public long claim(final int peer, final int length)
        {
            if (peer < 0 || peer >= inboxes.length || length > maxMessageLength || claimedPeer >= 0)
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
            final byte[] bytes = scratch.asSlice(0, claimedLength).toArray(ValueLayout.JAVA_BYTE);
            inboxes[claimedPeer].add(new Message(self, bytes));
            claimedPeer = -1;
        }

        @Override
        public void abort()
        {
            claimedPeer = -1;
        }

        @Override
        public int flush()
        {
            return 0;
        }

        @Override
        public int poll(final MessageHandler handler, final int limit)
        {
            int n = 0;
            Message message;
            while (n < limit && (message = inboxes[self].poll()) != null)
            {
                handler.onMessage(MemorySegment.ofArray(message.bytes()), 0, message.bytes().length, message.from());
                n++;
            }
            return n;
        }

        @Override
        public String describePeer(final int peer)
        {
            return "heap endpoint " + peer;
        }

        @Override
        public void close()
        {
        }
    }
}
