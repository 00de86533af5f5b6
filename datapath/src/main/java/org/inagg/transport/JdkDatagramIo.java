package org.inagg.transport;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;

/**
 * Datagrams through the JDK's {@link DatagramChannel}: one {@code send} per queued message, one {@code receive} per
 * datagram into a buffer with room for any UDP payload. The JDK allocates a sender's address when the sender changes.
 */
final class JdkDatagramIo implements DatagramIo
{
    /** Room for any UDP payload, so that no datagram is silently truncated. */
    private static final int RX_BUFFER_BYTES = 65536;

    private final DatagramChannel channel;
    private final String why;
    private final ByteBuffer rxBuffer = ByteBuffer.allocateDirect(RX_BUFFER_BYTES);
    private final MemorySegment rxMemory = MemorySegment.ofBuffer(rxBuffer);

    /** @param why the reason batch I/O is not used. */
    JdkDatagramIo(final DatagramChannel channel, final String why)
    {
        this.channel = channel;
        this.why = why;
    }

    @Override
    public int send(final SendQueue queue, final UdpPeers peers)
    {
        int sent = 0;
        try
        {
            while (queue.head < queue.tail)
            {
                final int at = queue.head;
                final ByteBuffer slot = queue.slots[at];
                slot.limit(queue.length[at]).position(0);
                final InetSocketAddress to = peers.address(queue.peer[at]);
                if (to == null)
                {
                    queue.head++; // removed after this message was queued: dropped, like a datagram lost on the way
                    peers.counters.increment(TransportCounter.DROP_UNSENT);
                    continue;
                }
                if (channel.send(slot, to) == 0)
                {
                    return sent;
                }
                queue.head++;
                sent++;
            }
            queue.clear();
        }
        catch (final IOException ex)
        {
            // An ICMP error from a peer that went away surfaces here; the datagram is lost like any other.
            queue.head++;
            peers.counters.increment(TransportCounter.DROP_UNSENT);
            if (queue.head == queue.tail)
            {
                queue.clear();
            }
        }
        return sent;
    }

    @Override
    public int receive(final UdpPeers peers, final MessageHandler handler, final int limit)
    {
        int received = 0;
        try
        {
            for (int datagrams = 0; datagrams < limit; datagrams++)
            {
                rxBuffer.clear();
                final SocketAddress source = channel.receive(rxBuffer);
                if (source == null)
                {
                    break;
                }
                final int peer = peers.onDatagramFrom((InetSocketAddress)source);
                if (peer == PeerTable.NO_PORT)
                {
                    continue;
                }
                peers.counters.received(rxBuffer.position());
                handler.onMessage(rxMemory, 0, rxBuffer.position(), peer);
                received++;
            }
        }
        catch (final IOException ex)
        {
            // Port-unreachable errors of earlier sends are reported on receive; nothing was received.
        }
        return received;
    }

    @Override
    public void peerAdded(final int peer, final InetSocketAddress address)
    {
    }

    @Override
    public String attachReusePortProgram(final ReusePortSteering program)
    {
        return "steering a port's datagrams needs batch I/O on the socket's descriptor, which is off: " + why;
    }

    @Override
    public String describe()
    {
        return "one datagram per system call (JDK DatagramChannel; batch I/O off: " + why + ")";
    }

    @Override
    public void close()
    {
    }
}
