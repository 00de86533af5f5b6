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
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.function.Consumer;
import java.util.ArrayList;
import java.util.List;

import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Object2IntHashMap;

/**
 * Messages as UDP datagrams on one non-blocking socket. Committed messages are queued and sent as a burst by
 * {@link #flush()}; {@link #poll} drains up to a limit of datagrams per call.
 * <p>
 * Peers are addresses: those given at construction keep their order (peer 0 is the first), {@link #addPeer} registers
 * more (a job's sources), and a datagram from an address not seen before is learned as the next peer, up to
 * {@code maxLearnedPeers} (all of {@code maxPeers} unless the opener keeps room for registrations, as a controlled
 * switch does, so that strangers can never crowd them out); beyond that their messages are handed up with peer -1. {@link #removePeer} frees a number for reuse. The JDK may allocate a sender address on receive when the sender changes; the DPDK transport is the
 * allocation-free fast path.
 */
public final class UdpTransport implements Transport
{
    /** System property: false keeps the JDK's one-datagram-per-call I/O instead of sendmmsg/recvmmsg. */
    public static final String BATCH_PROP_NAME = "inagg.udp.batch";
    /** Room for any UDP payload, so that no datagram is silently truncated. */
    private static final int RX_BUFFER_BYTES = 65536;
    private static final int SOCKET_BUFFER_BYTES = 8 << 20;

    private final DatagramChannel channel;
    private final int maxMessageLength;
    private final int maxPeers;
    /** Peer addresses by number; null where a peer was removed (its number is reused by the next one added). */
    private final List<InetSocketAddress> peers = new ArrayList<>();
    private final Object2IntHashMap<SocketAddress> peerByAddress = new Object2IntHashMap<>(-1);
    private final org.agrona.collections.IntArrayList freePeers = new org.agrona.collections.IntArrayList();
    /** Which peers were learned from a datagram rather than registered: at most maxLearnedPeers of them. */
    private final java.util.BitSet learned = new java.util.BitSet();
    private final int maxLearnedPeers;
    private int learnedPeers;
    private final ByteBuffer rxBuffer = ByteBuffer.allocateDirect(RX_BUFFER_BYTES);
    private final MemorySegment rxMemory = MemorySegment.ofBuffer(rxBuffer);
    private final ByteBuffer[] txSlots;
    private final MemorySegment txMemory;
    /** sendmmsg/recvmmsg with GSO/GRO on the socket's descriptor, or null for the JDK's one call per datagram. */
    private final UdpBatchIo batch;
    private final String io;
    private final Long2LongHashMap peerByKey = new Long2LongHashMap(-1);
    private final int[] batchCount;
    private final int[] sendOrder;
    private final boolean[] taken;
    /** Where unsent messages wait while the queue is compacted after a partial send (rare: a full socket). */
    private final MemorySegment txScratch;
    private final int[] scratchPeer;
    private final int[] scratchLength;
    private final int[] txPeer;
    private final int[] txLength;
    private int txHead;
    private int txTail;
    private int claimedPeer = -1;
    private int claimedLength;
    private InetSocketAddress sender;
    /** Opened on the first {@link #awaitReceive}: only agents idling with the blocking strategy need it. */
    private Selector selector;
    private static final Consumer<SelectionKey> READY = key -> { };

    private UdpTransport(
        final DatagramChannel channel, final List<InetSocketAddress> knownPeers, final int maxPeers,
        final int maxLearnedPeers, final int maxMessageLength, final int burst)
    {
        this.channel = channel;
        this.maxPeers = maxPeers;
        this.maxLearnedPeers = maxLearnedPeers;
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
        batchCount = new int[burst];
        sendOrder = new int[burst];
        taken = new boolean[burst];
        txScratch = java.lang.foreign.Arena.ofAuto().allocate((long)burst * maxMessageLength, 64);
        scratchPeer = new int[burst];
        scratchLength = new int[burst];
        final StringBuilder why = new StringBuilder();
        final InetSocketAddress local = localAddress(channel);
        batch = Boolean.parseBoolean(System.getProperty(BATCH_PROP_NAME, "true"))
            ? UdpBatchIo.open(local, burst, maxPeers, why) : null;
        if (batch == null && why.isEmpty())
        {
            why.append(BATCH_PROP_NAME).append("=false");
        }
        io = batch == null ? "one datagram per system call (JDK DatagramChannel; batch I/O off: " + why + ")"
            : "sendmmsg" + (batch.gso() ? " + UDP GSO" : " (no UDP GSO in this kernel)") + ", recvmmsg"
                + (batch.gro() ? " + UDP GRO" : " (no UDP GRO in this kernel)");
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
        return "socket I/O: " + io;
    }

    /** The address the socket is bound to. */
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
     */
    public int addPeer(final InetSocketAddress address)
    {
        final int known = peerByAddress.getValue(address);
        if (known >= 0)
        {
            if (learned.get(known))
            {
                learned.clear(known);
                learnedPeers--;
            }
            return known;
        }
        return insertPeer(address);
    }

    /** A stranger's address seen on receive: its new number, or -1 when learned peers fill their share. */
    private int learnPeer(final InetSocketAddress address)
    {
        if (learnedPeers >= maxLearnedPeers)
        {
            return -1;
        }
        final int peer = insertPeer(address);
        if (peer >= 0)
        {
            learned.set(peer);
            learnedPeers++;
        }
        return peer;
    }

    private int insertPeer(final InetSocketAddress address)
    {
        final int peer;
        if (!freePeers.isEmpty())
        {
            peer = freePeers.removeAt(freePeers.size() - 1);
            peers.set(peer, address);
        }
        else if (peers.size() < maxPeers)
        {
            peers.add(address);
            peer = peers.size() - 1;
        }
        else
        {
            return -1;
        }
        peerByAddress.put(address, peer);
        if (batch != null)
        {
            batch.setPeer(peer, address);
            peerByKey.put(UdpBatchIo.key(address), peer);
        }
        return peer;
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
    public boolean removePeer(final int peer)
    {
        final InetSocketAddress address = peerAddress(peer);
        if (address == null)
        {
            return false;
        }
        peerByAddress.remove(address);
        if (batch != null)
        {
            peerByKey.remove(UdpBatchIo.key(address));
        }
        peers.set(peer, null);
        if (learned.get(peer))
        {
            learned.clear(peer);
            learnedPeers--;
        }
        freePeers.addInt(peer);
        return true;
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
        if (batch != null)
        {
            return flushBatch();
        }
        int sent = 0;
        try
        {
            while (txHead < txTail)
            {
                final ByteBuffer slot = txSlots[txHead];
                slot.limit(txLength[txHead]).position(0);
                final InetSocketAddress to = peers.get(txPeer[txHead]);
                if (to == null)
                {
                    txHead++; // removed after this message was queued: dropped, like a datagram lost on the way
                    continue;
                }
                if (channel.send(slot, to) == 0)
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

    /**
     * One sendmmsg for the queued burst. The burst is regrouped by peer (the switch's results to its workers
     * alternate between them), keeping each peer's order, and each run of messages to one peer whose lengths are
     * equal (the last may be shorter) goes as one GSO super-datagram, which the kernel cuts back into those packets.
     * What the socket did not take stays queued, in order, for the next flush.
     */
    private int flushBatch()
    {
        if (txHead == txTail)
        {
            txHead = 0;
            txTail = 0;
            return 0;
        }
        final long base = txMemory.address();
        int messages = 0;
        int iovec = 0;
        for (int i = txHead; i < txTail; i++)
        {
            taken[i] = false;
        }
        for (int i = txHead; i < txTail; i++)
        {
            if (taken[i])
            {
                continue;
            }
            final int peer = txPeer[i];
            final int length = txLength[i];
            taken[i] = true;
            sendOrder[iovec] = i;
            batch.setIovec(iovec, base + (long)i * maxMessageLength, length);
            int count = 1;
            int bytes = length;
            for (int j = i + 1; batch.gso() && j < txTail && count < UdpBatchIo.MAX_GSO_SEGMENTS; j++)
            {
                if (taken[j] || txPeer[j] != peer)
                {
                    continue;
                }
                final int next = txLength[j];
                if (next > length || bytes + next > UdpBatchIo.MAX_GSO_BYTES)
                {
                    break; // the peer's next message starts the next run: its order is kept
                }
                taken[j] = true;
                sendOrder[iovec + count] = j;
                batch.setIovec(iovec + count, base + (long)j * maxMessageLength, next);
                bytes += next;
                count++;
                if (next < length)
                {
                    break; // only the last segment of a GSO datagram may be shorter
                }
            }
            batch.prepareSend(messages, peer, iovec, count, length);
            batchCount[messages] = count;
            messages++;
            iovec += count;
        }
        int sent = batch.send(messages);
        if (sent < 0 && -sent != UdpBatchIo.EAGAIN)
        {
            if (batch.gso() && batchCount[0] > 1)
            {
                batch.disableGso(); // a device that cannot segment (EIO): the same burst goes unsegmented next time
                sent = 0;
            }
            else
            {
                sent = 1; // an ICMP error from a peer that went away: that datagram is lost like any other
            }
        }
        int packets = 0;
        for (int m = 0; m < Math.max(0, sent); m++)
        {
            packets += batchCount[m];
        }
        if (packets == txTail - txHead)
        {
            txHead = 0;
            txTail = 0;
        }
        else if (packets > 0)
        {
            keepUnsent(packets, iovec);
        }
        return packets;
    }

    /** Moves the messages at send positions {@code from..to-1} to the front of the queue, in that order. */
    private void keepUnsent(final int from, final int to)
    {
        final int unsent = to - from;
        for (int k = 0; k < unsent; k++)
        {
            final int q = sendOrder[from + k];
            MemorySegment.copy(txMemory, (long)q * maxMessageLength, txScratch, (long)k * maxMessageLength,
                txLength[q]);
            scratchPeer[k] = txPeer[q];
            scratchLength[k] = txLength[q];
        }
        for (int k = 0; k < unsent; k++)
        {
            MemorySegment.copy(txScratch, (long)k * maxMessageLength, txMemory, (long)k * maxMessageLength,
                scratchLength[k]);
            txPeer[k] = scratchPeer[k];
            txLength[k] = scratchLength[k];
        }
        txHead = 0;
        txTail = unsent;
    }

    /** One recvmmsg at a time; a GRO datagram is handed up as the packets it was coalesced from. */
    private int pollBatch(final MessageHandler handler, final int limit)
    {
        int received = 0;
        while (received < limit)
        {
            final int datagrams = batch.receive(limit - received);
            if (datagrams <= 0)
            {
                break; // none queued, or an error reported for an earlier send: nothing was received
            }
            for (int d = 0; d < datagrams; d++)
            {
                final long key = batch.receivedSenderKey(d);
                int peer = (int)peerByKey.get(key);
                if (peer < 0)
                {
                    final InetSocketAddress address = UdpBatchIo.address(key);
                    peer = learnPeer(address);
                    sender = address;
                }
                else
                {
                    sender = peers.get(peer);
                }
                final int length = batch.receivedLength(d);
                final int segment = batch.receivedSegment(d);
                final long offset = UdpBatchIo.receivedOffset(d);
                for (int at = 0; at < length; at += segment)
                {
                    handler.onMessage(batch.rxData, offset + at, Math.min(segment, length - at), peer);
                    received++;
                }
            }
            if (datagrams < UdpBatchIo.RX_BATCH)
            {
                break;
            }
        }
        return received;
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        if (batch != null)
        {
            return pollBatch(handler, limit);
        }
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
                    peer = learnPeer((InetSocketAddress)source);
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
            if (txHead < txTail)
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
        if (batch != null)
        {
            batch.close();
        }
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
