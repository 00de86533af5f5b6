package org.inagg.transport.capture;

import java.lang.foreign.MemorySegment;

import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportDecorator;

/**
 * Decorates a transport with a packet capture: every message it sends and every message it receives is written to a
 * pcap file ({@link PcapWriter}) as an Ethernet frame, the message framed by {@link FrameHeaders}. Open it with
 * Wireshark or tshark and the dissector in {@code tools/wireshark/inagg.lua} (docs/observability.md).
 * <p>
 * A sent message is captured at {@link #commit()}, before the inner transport takes it (what this node handed to the
 * network: a datagram the socket or the NIC queue then refuses still appears); an aborted claim is not captured. A
 * received message is captured when {@link #poll} hands it up, before the handler sees it. Put the capture directly
 * on the real transport, inside any {@link org.inagg.transport.FaultInjectingTransport}, so that it records what
 * arrived rather than what the fault injection let through.
 * <p>
 * When capture is off nothing is wrapped, so it costs nothing. When on, each message costs one copy into the writer's
 * buffer and the headers' few stores; nothing is allocated per message. {@link #close()} closes the inner transport,
 * then flushes and closes the file.
 */
public final class PcapTransport extends TransportDecorator implements MessageHandler
{
    private final PcapWriter writer;
    private final FrameHeaders headers;
    private long claimedOffset = CLAIM_FAILED;
    private int claimedLength;
    private int claimedPeer;
    private MessageHandler handler;
    private boolean closed;

    /**
     * @param inner   the transport to watch.
     * @param writer  the file; this transport closes it.
     * @param headers how the transport's frames look ({@link FrameHeaders#udp}, {@link FrameHeaders#inProcess},
     *                {@link FrameHeaders#inPlace}).
     */
    public PcapTransport(final Transport inner, final PcapWriter writer, final FrameHeaders headers)
    {
        super(inner);
        this.writer = writer;
        this.headers = headers;
    }

    /** Wraps {@code inner} when {@code writer} is not null, else returns it as it is. */
    public static Transport wrap(final Transport inner, final PcapWriter writer, final FrameHeaders headers)
    {
        return writer == null ? inner : new PcapTransport(inner, writer, headers);
    }

    public PcapWriter writer()
    {
        return writer;
    }

    @Override
    public long claim(final int peer, final int length)
    {
        final long offset = inner.claim(peer, length);
        claimedOffset = offset;
        claimedLength = length;
        claimedPeer = peer;
        return offset;
    }

    @Override
    public void commit()
    {
        if (claimedOffset != CLAIM_FAILED)
        {
            capture(inner.txMemory(), claimedOffset, claimedLength, claimedPeer, true);
            claimedOffset = CLAIM_FAILED;
        }
        inner.commit();
    }

    @Override
    public void abort()
    {
        claimedOffset = CLAIM_FAILED;
        inner.abort();
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        this.handler = handler;
        return inner.poll(this, limit);
    }

    @Override
    public void onMessage(final MemorySegment memory, final long offset, final int length, final int peer)
    {
        capture(memory, offset, length, peer, false);
        handler.onMessage(memory, offset, length, peer);
    }

    private void capture(
        final MemorySegment memory, final long offset, final int length, final int peer, final boolean outbound)
    {
        final int headersLength = headers.length(memory, offset, length, peer, outbound);
        final long at = writer.claim(headersLength + length);
        if (at >= 0)
        {
            headers.write(memory, offset, length, peer, outbound, writer.buffer(), at, headersLength);
            MemorySegment.copy(memory, offset, writer.buffer(), at + headersLength, length);
            writer.commit();
        }
    }

    /** Closes the inner transport, then flushes and closes the capture file. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try
        {
            inner.close();
        }
        finally
        {
            writer.close();
        }
    }
}
