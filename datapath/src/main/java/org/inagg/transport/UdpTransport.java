package org.inagg.transport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.List;
import java.util.function.Consumer;

/**
 * Messages as UDP datagrams on one non-blocking socket. Committed messages are queued ({@link SendQueue}) and sent as a
 * burst by {@link #flush()}; {@link #poll} drains up to a limit of datagrams per call. How datagrams cross the socket
 * is a {@link DatagramIo} chosen once when the transport opens: {@code sendmmsg}/{@code recvmmsg} with UDP GSO/GRO
 * where the platform has them ({@link MmsgDatagramIo}), else the JDK's one call per datagram ({@link JdkDatagramIo});
 * {@link #describeIo()} says which and why.
 * <p>
 * Peers are addresses, numbered by the {@link PeerTable} rule that the DPDK transport follows too: those given at
 * construction keep their order (peer 0 is the first), {@link #addPeer} registers more (a job's sources), and a
 * datagram from an address not seen before is learned as the next peer, up to {@code maxLearnedPeers} (all of
 * {@code maxPeers} unless the opener keeps room for registrations, as a controlled switch does, so that strangers can
 * never crowd them out); beyond that their messages are handed up with peer -1. {@link #removePeer} frees a number for
 * reuse. A datagram from UDP source port 0 is dropped and counted ({@link #datagramsFromPortZero()}); the
 * {@link #counters()} count messages and bytes each way and every drop by reason. The JDK may allocate a sender
 * address on receive when the sender changes; the DPDK transport is the allocation-free fast path.
 */
public final class UdpTransport implements Transport, SourceRegistry
{
    /** System property: false keeps the JDK's one-datagram-per-call I/O instead of sendmmsg/recvmmsg. */
    public static final String BATCH_PROP_NAME = DatagramIo.BATCH_PROP_NAME;
    private static final int SOCKET_BUFFER_BYTES = 8 << 20;
    private static final Consumer<SelectionKey> READY = key -> { };

    private final DatagramChannel channel;
    private final int maxMessageLength;
    private final DatagramIo io;
    private final UdpPeers peers;
    private final SendQueue queue;
    private int claimedPeer = -1;
    private int claimedLength;
    /** Opened on the first {@link #awaitReceive}: only agents idling with the blocking strategy need it. */
    private Selector selector;

    private UdpTransport(
        final DatagramChannel channel, final List<InetSocketAddress> knownPeers, final int maxPeers,
        final int maxLearnedPeers, final int maxMessageLength, final int burst)
    {
        this.channel = channel;
        this.maxMessageLength = maxMessageLength;
        this.queue = new SendQueue(burst, maxMessageLength);
        this.io = DatagramIo.open(channel, localAddress(channel), burst, maxPeers, maxMessageLength);
        this.peers = new UdpPeers(maxPeers, maxLearnedPeers, io);
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
        return open(bind, knownPeers, maxPeers, maxPeers, maxMessageLength, burst);
    }

    /**
     * Opens a socket bound to {@code bind} (port 0 picks a free one) whose table keeps room for registered peers.
     *
     * @param knownPeers       peers numbered in this order from 0.
     * @param maxPeers         most peers to register, learned ones included.
     * @param maxLearnedPeers  most peers learned from strangers' datagrams (1..maxPeers): a switch whose jobs' sources
     *                         are registered at run time (by a controller) keeps {@code maxPeers - maxLearnedPeers}
     *                         for them, whatever a flood from many source ports does.
     * @param maxMessageLength largest message in bytes.
     * @param burst            messages queued before a send burst.
     */
    public static UdpTransport open(
        final InetSocketAddress bind,
        final List<InetSocketAddress> knownPeers,
        final int maxPeers,
        final int maxLearnedPeers,
        final int maxMessageLength,
        final int burst)
    {
        return open(bind, knownPeers, maxPeers, maxLearnedPeers, maxMessageLength, burst, false);
    }

    /**
     * As {@link #open(InetSocketAddress, List, int, int, int, int)}, with SO_REUSEPORT: one of a group of sockets on
     * the same address, each read by its own thread, which a {@link ReusePortSteering} program attached to any of
     * them ({@link #steer}) splits the datagrams between. Open the group's sockets one after another (port 0 for the
     * first, then the port it got).
     */
    public static UdpTransport openSharingPort(
        final InetSocketAddress bind,
        final int maxPeers,
        final int maxLearnedPeers,
        final int maxMessageLength,
        final int burst)
    {
        return open(bind, List.of(), maxPeers, maxLearnedPeers, maxMessageLength, burst, true);
    }

    private static UdpTransport open(
        final InetSocketAddress bind,
        final List<InetSocketAddress> knownPeers,
        final int maxPeers,
        final int maxLearnedPeers,
        final int maxMessageLength,
        final int burst,
        final boolean reusePort)
    {
        if (maxLearnedPeers < 0 || maxLearnedPeers > maxPeers)
        {
            throw new IllegalArgumentException("learned peers must be in 0.." + maxPeers + ", got " + maxLearnedPeers);
        }
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
            if (reusePort)
            {
                channel.setOption(StandardSocketOptions.SO_REUSEPORT, true);
            }
            channel.bind(bind);
            return new UdpTransport(channel, knownPeers, maxPeers, maxLearnedPeers, maxMessageLength, burst);
        }
        catch (final java.net.BindException ex)
        {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot bind a UDP socket to " + bind + ": " + ex.getMessage()
                + (bind.getPort() != 0 && bind.getPort() < 1024 ? " (ports below 1024 need root or"
                + " CAP_NET_BIND_SERVICE)" : " (is another inagg switch or worker using port " + bind.getPort()
                + "? pick another with --bind, or port 0 for any free one)"), ex);
        }
        catch (final IOException ex)
        {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot open a UDP socket on " + bind + ": " + ex.getMessage(), ex);
        }
    }

    /** Whether the socket moves datagrams with sendmmsg/recvmmsg on its own descriptor (else the JDK's channel). */
    public boolean batchIo()
    {
        return io instanceof MmsgDatagramIo;
    }

    /**
     * Attaches {@code steering} to this socket's SO_REUSEPORT group ({@link #openSharingPort}): from then on it picks
     * which of the group's sockets takes each datagram.
     *
     * @return null when attached, else why not (the kernel refused it, or the socket is not on batch I/O, whose
     *         descriptor the program is attached through).
     */
    public String steer(final ReusePortSteering steering)
    {
        return io.attachReusePortProgram(steering);
    }

    /** The receive buffer the kernel granted, in bytes (asked for 8 MiB; net.core.rmem_max caps it). */
    public int receiveBufferBytes()
    {
        return bufferOption(StandardSocketOptions.SO_RCVBUF);
    }

    /** The send buffer the kernel granted, in bytes (asked for 8 MiB; net.core.wmem_max caps it). */
    public int sendBufferBytes()
    {
        return bufferOption(StandardSocketOptions.SO_SNDBUF);
    }

    /** One line on the socket's buffers, for a node's start-up report. */
    public String describeBuffers()
    {
        final int receive = receiveBufferBytes();
        return String.format("socket buffers: receive %,d bytes, send %,d bytes (asked %,d each; net.core.rmem_max and"
            + " wmem_max cap them)", receive, sendBufferBytes(), SOCKET_BUFFER_BYTES);
    }

    private int bufferOption(final java.net.SocketOption<Integer> option)
    {
        try
        {
            return channel.getOption(option);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + option.name() + ": " + ex.getMessage(), ex);
        }
    }

    /** How datagrams are sent and received: batch system calls with GSO/GRO, or one call per datagram and why. */
    public String describeIo()
    {
        return "socket I/O: " + io.describe();
    }

    /** The address the socket is bound to. */
    @Override
    public InetSocketAddress localAddress()
    {
        return localAddress(channel);
    }

    private static InetSocketAddress localAddress(final DatagramChannel channel)
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

    /**
     * Registers {@code address} as a peer (or finds it, and keeps it from then on if it was learned) and returns its
     * number, or -1 when the peer table is full. Numbers of removed peers are reused.
     *
     * @throws IllegalArgumentException for an address that is not IPv4 or has port 0.
     */
    @Override
    public int addPeer(final InetSocketAddress address)
    {
        return peers.add(address);
    }

    /**
     * Forgets peer {@code peer} (a job's registered source, when the job is removed): its datagrams are strangers' again
     * and its number goes to the next peer added. Messages already queued for it are dropped or still reach its old
     * address, like datagrams in flight; nobody claims for a removed peer (its job is gone). Not on a hot path: the
     * send path does not check for removed peers, to stay as small as the JIT needs to keep it allocation-free
     * ({@code PerPacketAllocationTest} caught a check in {@code claim}).
     *
     * @return whether there was such a peer.
     */
    @Override
    public boolean removePeer(final int peer)
    {
        return peers.remove(peer);
    }

    /** The address of peer {@code peer}, or null when there is no such peer. */
    @Override
    public InetSocketAddress peerAddress(final int peer)
    {
        return peers.address(peer);
    }

    /**
     * The source address of the datagram that {@link #poll} is handing up now, also when its sender is beyond the peer
     * table (peer -1); valid during the handler's call. The same object for as long as the sender does not change.
     */
    public InetSocketAddress currentSender()
    {
        return peers.sender();
    }

    /** Datagrams dropped because they came from UDP source port 0: no reply could reach their sender. */
    public long datagramsFromPortZero()
    {
        return peers.counters.get(TransportCounter.DROP_SOURCE_PORT_ZERO);
    }

    @Override
    public TransportCounters counters()
    {
        return peers.counters;
    }

    @Override
    public void countInto(final TransportCounters counters)
    {
        peers.counters.addTo(counters);
        peers.counters = counters;
    }

    @Override
    public int maxMessageLength()
    {
        return maxMessageLength;
    }

    @Override
    public MemorySegment txMemory()
    {
        return queue.memory;
    }

    @Override
    public long claim(final int peer, final int length)
    {
        if (peer < 0 || peer >= peers.numbers() || length > maxMessageLength)
        {
            return CLAIM_FAILED;
        }
        if (queue.isFull())
        {
            flush();
            if (queue.isFull())
            {
                peers.counters.increment(TransportCounter.CLAIMS_REFUSED);
                return CLAIM_FAILED;
            }
        }
        claimedPeer = peer;
        claimedLength = length;
        return queue.nextOffset();
    }

    @Override
    public void commit()
    {
        queue.add(claimedPeer, claimedLength);
        claimedPeer = -1;
        peers.counters.sent(claimedLength);
    }

    @Override
    public void abort()
    {
        claimedPeer = -1;
    }

    @Override
    public int flush()
    {
        return io.send(queue, peers);
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        return io.receive(peers, handler, limit);
    }

    /**
     * Waits in epoll until a datagram is readable or the timeout passed (rounded up to a millisecond, the selector's
     * unit); returns at once with queued sends still unsent, so that a full socket buffer is retried soon.
     */
    @Override
    public boolean awaitReceive(final long timeoutNs)
    {
        try
        {
            if (selector == null)
            {
                selector = Selector.open();
                channel.register(selector, SelectionKey.OP_READ);
            }
            if (!queue.isEmpty())
            {
                return false;
            }
            selector.select(READY, Math.max(1, (timeoutNs + 999_999) / 1_000_000));
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    @Override
    public String describePeer(final int peer)
    {
        final InetSocketAddress address = peerAddress(peer);
        return address != null ? "udp://" + address.getHostString() + ":" + address.getPort() : "unknown peer " + peer;
    }

    @Override
    public void close()
    {
        if (selector != null)
        {
            try
            {
                selector.close();
            }
            catch (final IOException ignore)
            {
                // the channel's close below releases the socket either way
            }
        }
        closeQuietly(channel);
        io.close();
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
