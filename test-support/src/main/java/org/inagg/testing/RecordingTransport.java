package org.inagg.testing;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.inagg.transport.DiscardTransport;
import org.inagg.transport.MessageHandler;
import org.inagg.wire.InaggHeader;

/**
 * A transport played by the test: it keeps a copy of every message committed to it with its destination peer
 * ({@link #sent}), hands the poller the messages the test queued ({@link #receiveOnPoll}), and refuses every claim
 * while told to ({@link #refuseClaims}), as a full socket or ring would. Allocates per message: for tests only.
 */
public class RecordingTransport extends DiscardTransport
{
    /** One committed message and its destination (or one queued for a poll, and its sender). */
    public record Sent(int peer, byte[] bytes)
    {
        public MemorySegment segment()
        {
            return MemorySegment.ofArray(bytes);
        }

        public int type()
        {
            return InaggHeader.type(segment(), 0);
        }

        public int status()
        {
            return InaggHeader.status(segment(), 0);
        }

        /** The message's Element Count words after the header. */
        public int[] lanes()
        {
            final int[] lanes = new int[InaggHeader.elementCount(segment(), 0)];
            for (int k = 0; k < lanes.length; k++)
            {
                lanes[k] = InaggHeader.element(segment(), 0, k);
            }
            return lanes;
        }
    }

    /** Every message committed and not yet {@link #drain drained}, in order. */
    public final List<Sent> sent = new ArrayList<>();
    private final ArrayDeque<Sent> inbox = new ArrayDeque<>();
    private boolean refusing;

    /** @param maxMessageLength the largest message a claim accepts. */
    public RecordingTransport(final int maxMessageLength)
    {
        super(maxMessageLength);
    }

    /** The messages sent since the last call. */
    public List<Sent> drain()
    {
        final List<Sent> copy = List.copyOf(sent);
        sent.clear();
        return copy;
    }

    /** Queues {@code bytes} from {@code peer} for the next {@link #poll}s, which hand them up in order. */
    public void receiveOnPoll(final int peer, final byte[] bytes)
    {
        inbox.add(new Sent(peer, bytes.clone()));
    }

    /** While true every claim fails: the node's messages stay queued, as behind a full socket or ring. */
    public void refuseClaims(final boolean refuse)
    {
        refusing = refuse;
    }

    /** Hands {@code bytes} to {@code handler} as a message from {@code peer}, in memory of exactly its length. */
    public static void deliver(final MessageHandler handler, final byte[] bytes, final int peer)
    {
        handler.onMessage(MemorySegment.ofArray(bytes), 0, bytes.length, peer);
    }

    @Override
    public long claim(final int peer, final int length)
    {
        return refusing ? CLAIM_FAILED : super.claim(peer, length);
    }

    @Override
    public void commit()
    {
        super.commit();
        sent.add(new Sent(claimedPeer(), txMemory().asSlice(0, claimedLength()).toArray(ValueLayout.JAVA_BYTE)));
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        int delivered = 0;
        Sent message;
        while (delivered < limit && (message = inbox.poll()) != null)
        {
            deliver(handler, message.bytes(), message.peer());
            delivered++;
        }
        return delivered;
    }
}
