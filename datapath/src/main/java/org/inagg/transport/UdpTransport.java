package org.inagg.transport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;

import org.agrona.collections.Object2IntHashMap;

/**
 * Messages as UDP datagrams on one non-blocking socket. Committed messages are queued and sent as a burst by
 * {@link #flush()}; {@link #poll} drains up to a limit of datagrams per call.
 * <p>
 * Peers are addresses: those given at construction keep their order (peer 0 is the first), and a datagram from an
 * address not seen before registers it as the next peer, up to {@code maxPeers}; beyond that its messages are handed
 * up with peer -1. The JDK may allocate a sender address on receive when the sender changes; the DPDK transport is the
 * allocation-free fast path.
 */
public final class UdpTransport implements Transport
{
    /** Room for any UDP payload, so that no datagram is silently truncated. */
    private static final int RX_BUFFER_BYTES = 65536;
    private static final int SOCKET_BUFFER_BYTES = 8 << 20;

    private final DatagramChannel channel;
    private final int maxMessageLength;
    private final int maxPeers;
    private final List<InetSocketAddress> peers = new ArrayList<>();
    private final Object2IntHashMap<SocketAddress> peerByAddress = new Object2IntHashMap<>(-1);
    private final ByteBuffer rxBuffer = ByteBuffer.allocateDirect(RX_BUFFER_BYTES);
    private final MemorySegment rxMemory = MemorySegment.ofBuffer(rxBuffer);
    private final ByteBuffer[] txSlots;
    private final MemorySegment txMemory;
    private final int[] txPeer;
    private final int[] txLength;
    private int txHead;
    private int txTail;
    private int claimedPeer = -1;
    private int claimedLength;
    private InetSocketAddress sender;

    private UdpTransport(
        final DatagramChannel channel, final List<InetSocketAddress> knownPeers, final int maxPeers,
        final int maxMessageLength, final int burst)
    {
        this.channel = channel;
        this.maxPeers = maxPeers;
        this.maxMessageLength = maxMessageLength;
        final ByteBuffer tx = ByteBuffer.allocateDirect(burst * maxMessageLength);
        txMemory = MemorySegment.ofBuffer(tx);
        txSlots = new ByteBuffer[burst];
        for (int i = 0; i < burst; i++)
        {
            txSlots[i] = tx.slice(i * maxMessageLength, maxMessageLength);
        }
        txPeer = new int[burst];
        txLength = new int[burst];
        for (final InetSocketAddress peer : knownPeers)
        {
            addPeer(peer);
        }
    }

    /**
     * Opens a socket bound to {@code bind} (port 0 picks a free one).
     *
     * @param knownPeers       peers numbered in this order from 0.
     * @param maxPeers         most peers to register, learned ones included.
     * @param maxMessageLength largest message in bytes.
     * @param burst            messages queued before a send burst.
     */
    public static UdpTransport open(
        final InetSocketAddress bind,
        final List<InetSocketAddress> knownPeers,
        final int maxPeers,
        final int maxMessageLength,
        final int burst)
    {
        if (maxMessageLength < 1 || maxMessageLength > 65507)
        {
            throw new IllegalArgumentException("UDP carries messages of 1..65507 bytes, asked for " + maxMessageLength);
        }
        if (burst < 1)
        {
            throw new IllegalArgumentException("burst must be at least 1, got " + burst);
        }
        for (final InetSocketAddress peer : knownPeers)
        {
            if (peer.isUnresolved())
            {
                throw new IllegalArgumentException("cannot resolve peer address " + peer.getHostString());
            }
        }
        DatagramChannel channel = null;
        try
        {
            channel = DatagramChannel.open(StandardProtocolFamily.INET);
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
            channel.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
            channel.bind(bind);
            return new UdpTransport(channel, knownPeers, maxPeers, maxMessageLength, burst);
        }
        catch (final IOException ex)
        {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot open a UDP socket on " + bind + ": " + ex.getMessage(), ex);
        }
    }

    /** The address the socket is bound to. */
    public InetSocketAddress localAddress()
    {
        try
        {
            return (InetSocketAddress)channel.getLocalAddress();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** Registers {@code address} as a peer (or finds it) and returns its number, or -1 when the peer table is full. */
    public int addPeer(final InetSocketAddress address)
    {
        final int known = peerByAddress.getValue(address);
        if (known >= 0)
        {
            return known;
        }
        if (peers.size() >= maxPeers)
        {
            return -1;
        }
        peers.add(address);
        peerByAddress.put(address, peers.size() - 1);
        return peers.size() - 1;
    }

    /** The address of peer {@code peer}, or null when there is no such peer. */
    public InetSocketAddress peerAddress(final int peer)
    {
        return peer >= 0 && peer < peers.size() ? peers.get(peer) : null;
    }

    /**
     * The source address of the datagram that {@link #poll} is handing up now, also when its sender is beyond the peer
     * table (peer -1); valid during the handler's call. The same object for as long as the sender does not change.
     */
    public InetSocketAddress currentSender()
    {
        return sender;
    }

    @Override
    public int maxMessageLength()
    {
        return maxMessageLength;
    }

    @Override
    public MemorySegment txMemory()
    {
        return txMemory;
    }

    @Override
    public long claim(final int peer, final int length)
    {
        if (peer < 0 || peer >= peers.size() || length > maxMessageLength)
        {
            return CLAIM_FAILED;
        }
        if (txTail == txSlots.length)
        {
            flush();
            if (txTail == txSlots.length)
            {
                return CLAIM_FAILED;
            }
        }
        claimedPeer = peer;
        claimedLength = length;
        return (long)txTail * maxMessageLength;
    }

    @Override
    public void commit()
    {
        txPeer[txTail] = claimedPeer;
        txLength[txTail] = claimedLength;
        txTail++;
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
        int sent = 0;
        try
        {
            while (txHead < txTail)
            {
                final ByteBuffer slot = txSlots[txHead];
                slot.limit(txLength[txHead]).position(0);
                if (channel.send(slot, peers.get(txPeer[txHead])) == 0)
                {
                    return sent;
                }
                txHead++;
                sent++;
            }
            txHead = 0;
            txTail = 0;
        }
        catch (final IOException ex)
        {
            // An ICMP error from a peer that went away surfaces here; the datagram is lost like any other.
            txHead++;
            if (txHead == txTail)
            {
                txHead = 0;
                txTail = 0;
            }
        }
        return sent;
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        int received = 0;
        try
        {
            while (received < limit)
            {
                rxBuffer.clear();
                final SocketAddress source = channel.receive(rxBuffer);
                if (source == null)
                {
                    break;
                }
                int peer = peerByAddress.getValue(source);
                if (peer < 0)
                {
                    peer = addPeer((InetSocketAddress)source);
                }
                sender = (InetSocketAddress)source;
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
    public String describePeer(final int peer)
    {
        return peer >= 0 && peer < peers.size() ? "udp://" + peers.get(peer).getHostString() + ":"
            + peers.get(peer).getPort() : "unknown peer " + peer;
    }

    @Override
    public void close()
    {
        closeQuietly(channel);
    }

    private static void closeQuietly(final DatagramChannel channel)
    {
        if (channel != null)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ignore)
            {
                // nothing more to release
            }
        }
    }
}
