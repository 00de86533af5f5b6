package org.inagg.transport.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.List;

import org.inagg.ffi.dpdk.Dpdk;
import org.inagg.ffi.dpdk.DpdkException;
import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.FastPath;
import org.inagg.ffi.dpdk.Mbuf;
import org.inagg.ffi.dpdk.MbufPool;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.NativeMemory;
import org.inagg.transport.PeerTable;
import org.inagg.transport.SourceRegistry;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.TransportCounters;
import org.inagg.transport.frame.UdpFrameCodec;

/**
 * Messages as Ethernet / IPv4 / UDP frames on DPDK port queues, built and parsed in place in mbufs: {@link #claim}
 * takes an mbuf, writes the 42 bytes of headers and returns the address (in {@link NativeMemory#ALL}) where the
 * caller writes the inagg message; {@link #commit} queues the mbuf for its link's transmit burst, which
 * {@link #flush()} hands to the driver ({@code rte_eth_tx_burst}, freeing what the queue did not take: a lost
 * message, which the protocol recovers). {@link #poll} receives one burst per link, hands each frame that is IPv4/UDP
 * to our address and port up as (memory, address of the UDP payload, length, peer), and frees the whole burst once the
 * handler has returned. Nothing is copied between Java and the mbufs and nothing is allocated per message, except when
 * a new peer is learned.
 * <p>
 * The frame is drawn, built and checked by {@link UdpFrameCodec}. Per peer, the 42 header bytes are kept as a template
 * with the IPv4 header's checksum summed except for the total length; a frame costs one 42-byte copy, three 16-bit
 * stores and a checksum fold. Received frames are dropped, and counted, unless they are single-segment and
 * {@link UdpFrameCodec#udpOffset} accepts them (IPv4/UDP to our address and port, well formed).
 * <p>
 * Mbuf ownership is exact: every mbuf taken (a transmit stash refilled in bursts, kept by {@link DpdkTxBursts};
 * received bursts) is handed to a transmit burst or freed, and {@link #close()} frees what the transport still holds,
 * so the pool's free count returns to its starting value. The first call on a thread without an EAL lcore id
 * registers the thread ({@code rte_thread_register}), which gives it a mempool cache; {@link #close()} unregisters it
 * again.
 * <p>
 * Not thread safe: one agent polls and sends. Peers ({@link DpdkPeers}, numbered by a {@link PeerTable}) given in the
 * configuration are numbered from 0; a frame from an unknown source (IPv4 address and UDP port) registers it as the
 * next peer on the link it arrived on, up to {@link DpdkTransportConfig#maxLearnedPeers()}; beyond that its messages
 * are handed up with peer -1. A frame from UDP source port 0 is dropped and counted
 * ({@link TransportCounter#DROP_SOURCE_PORT_ZERO}): no reply could reach its sender. Ports are found, started and closed by {@link DpdkPorts}.
 * <p>
 * <b>Registered sources</b> ({@link #addPeer(InetSocketAddress)}: a switch's workers, by IPv4 address and UDP port)
 * are pinned to the MAC and link of the first JOIN the switch accepts from their address ({@link #pin}); until then,
 * and from then on for frames from their address with another MAC, messages are handed up from the source's unpinned
 * peer ({@link #claimedPeer}), which the switch's source check refuses like a forged ip:port over UDP; counted in
 * {@link #framesFromUnpinnedSources()}.
 */
public final class DpdkTransport implements Transport, SourceRegistry
{
    /** Bytes of Ethernet, IPv4 and UDP headers in front of each message. */
    public static final int HEADERS_LENGTH = UdpFrameCodec.HEADERS_LENGTH;
    private static final int LCORE_ID_ANY = -1;

    private static final MemorySegment MEMORY = NativeMemory.ALL;

    private final DpdkTransportConfig config;
    private final MbufPool pool;
    private final int burst;
    private final int maxMessageLength;
    private final int linkCount;
    private final int[] linkPort;
    private final int[] linkRxQueue;
    private final DpdkPorts ports;
    private final int localIp;
    private final int localUdpPort;
    /** Peer numbers below it are peers; from it up, unpinned peers of registered sources ({@link DpdkPeers}). */
    private final int maxPeers;

    private final Arena arena = Arena.ofShared();
    private final DpdkTxBursts tx;
    private final MemorySegment rxMbufs;
    private int nextRxLink;

    private final DpdkPeers peers;

    private Thread owner;
    private boolean registeredThread;
    private boolean closed;

    private int claimedLength;
    /** Messages and bytes each way, drops by reason; the DPDK-only counts are the fields below. */
    private TransportCounters counters = TransportCounters.inMemory();
    private long framesReceived;
    private long peersLearned;
    private long framesFromUnpinnedSources;
    /** The peer of the message the handler has now, for {@link #pin}; {@link #NO_PEER} between messages. */
    private int delivering = NO_PEER;

    private DpdkTransport(final DpdkTransportConfig config, final DpdkPorts ports)
    {
        this.ports = ports;
        this.config = config;
        this.pool = config.pool();
        this.burst = config.burst();
        this.maxMessageLength = config.maxMessageLength();
        final List<DpdkTransportConfig.Link> links = config.links();
        this.linkCount = links.size();
        this.linkPort = ports.linkPorts();
        this.linkRxQueue = new int[linkCount];
        final int[] linkTxQueue = new int[linkCount];
        for (int l = 0; l < linkCount; l++)
        {
            linkRxQueue[l] = links.get(l).rxQueue();
            linkTxQueue[l] = links.get(l).txQueue();
        }
        this.localIp = config.localIp();
        this.localUdpPort = config.localUdpPort();
        this.maxPeers = config.maxPeers();
        this.tx = new DpdkTxBursts(pool.address(), burst, linkPort, linkTxQueue, arena);
        this.rxMbufs = arena.allocate(ValueLayout.ADDRESS, burst);
        this.peers = new DpdkPeers(config, arena);
        for (final DpdkPeer peer : config.peers())
        {
            addPeer(peer);
        }
    }

    /**
     * Opens the transport: finds each link's port and, unless {@link DpdkTransportConfig#startPorts(boolean)} is off,
     * configures it with as many queues as its links use (with more than one receive queue, asking for UDP/IPv4 RSS
     * unless {@link DpdkTransportConfig#rss(boolean)} is off; see {@link #rssHashTypes(int)}), sets them up (receiving
     * into the pool), enables promiscuous mode where the device has it, and starts it. EAL must be running.
     *
     * @throws IllegalStateException when EAL is not initialised.
     * @throws DpdkException naming the port and the DPDK error when a port is missing or will not start.
     */
    public static DpdkTransport open(final DpdkTransportConfig config)
    {
        config.conclude();
        if (Eal.current() == null)
        {
            throw new IllegalStateException("EAL is not initialised in this process: start it first (DpdkEal.start)");
        }
        final DpdkPorts ports = DpdkPorts.find(config);
        final DpdkTransport transport = new DpdkTransport(config, ports);
        if (config.startPorts())
        {
            try
            {
                ports.start(config);
            }
            catch (final RuntimeException ex)
            {
                transport.close();
                throw ex;
            }
        }
        return transport;
    }

    /**
     * Registers {@code peer} (or finds it by IPv4 address and UDP port) and returns its number, or -1 when the peer
     * table is full.
     */
    public int addPeer(final DpdkPeer peer)
    {
        return peers.add(peer);
    }

    /**
     * Registers {@code source} (a job's worker, by IPv4 address and UDP port; or finds it) as a peer whose MAC and link
     * the first JOIN the switch accepts from it pins ({@link #pin}); claims to it fail until then.
     *
     * @return its number, or {@link #NO_PEER} when the peer table is full.
     * @throws IllegalArgumentException for an address that is not IPv4 or has port 0.
     */
    @Override
    public int addPeer(final InetSocketAddress source)
    {
        final long key = PeerTable.keyOf(source);
        return peers.addSource(PeerTable.ipOf(key), PeerTable.portOf(key));
    }

    @Override
    public boolean removePeer(final int peer)
    {
        return peers.remove(peer);
    }

    @Override
    public InetSocketAddress peerAddress(final int peer)
    {
        final long key = peers.keyOf(peer);
        return key < 0 ? null : PeerTable.addressOf(key);
    }

    @Override
    public InetSocketAddress localAddress()
    {
        return PeerTable.addressOf(PeerTable.key(localIp, localUdpPort));
    }

    @Override
    public int claimedPeer(final int peer)
    {
        return peers.claimedPeer(peer);
    }

    @Override
    public boolean isPinned(final int peer)
    {
        return peers.isPinned(peer);
    }

    /** Pins the MAC and link of the frame being handed up now, from unpinned peer {@code unpinnedPeer}. */
    @Override
    public boolean pin(final int unpinnedPeer)
    {
        if (unpinnedPeer != delivering || peers.claimedPeer(unpinnedPeer) < 0)
        {
            return false;
        }
        peers.pin(unpinnedPeer);
        return true;
    }

    @Override
    public int maxMessageLength()
    {
        return maxMessageLength;
    }

    @Override
    public MemorySegment txMemory()
    {
        return MEMORY;
    }

    @Override
    public long claim(final int peer, final int length)
    {
        if (!peers.contains(peer) || length < 0 || length > maxMessageLength)
        {
            return CLAIM_FAILED;
        }
        if (Thread.currentThread() != owner)
        {
            bindThread();
        }
        final long frame = tx.claim(peers.link(peer), HEADERS_LENGTH + length, counters);
        if (frame == DpdkTxBursts.NO_FRAME)
        {
            counters.increment(TransportCounter.CLAIMS_REFUSED);
            return CLAIM_FAILED;
        }
        peers.writeHeaders(peer, MEMORY, frame, length);
        claimedLength = length;
        return frame + HEADERS_LENGTH;
    }

    @Override
    public void commit()
    {
        tx.commit();
        counters.sent(claimedLength);
    }

    @Override
    public void abort()
    {
        tx.abort();
    }

    @Override
    public int flush()
    {
        return tx.flush(counters);
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        if (Thread.currentThread() != owner)
        {
            bindThread();
        }
        int handled = 0;
        delivering = NO_PEER;
        for (int i = 0; i < linkCount && handled < limit; i++)
        {
            final int link = nextRxLink;
            nextRxLink = link + 1 == linkCount ? 0 : link + 1;
            final int received = FastPath.rxBurst(linkPort[link], linkRxQueue[link], rxMbufs,
                Math.min(burst, limit - handled));
            if (received == 0)
            {
                continue;
            }
            framesReceived += received;
            try
            {
                for (int m = 0; m < received; m++)
                {
                    handled += deliver(Mbuf.at(rxMbufs, m), link, handler);
                }
            }
            finally
            {
                FastPath.bulkFree(rxMbufs, received);
            }
        }
        return handled;
    }

    private int deliver(final long mbuf, final int link, final MessageHandler handler)
    {
        final int frameLength = Mbuf.dataLen(mbuf);
        final long frame = Mbuf.dataAddress(mbuf);
        final int udp = Mbuf.pktLen(mbuf) != frameLength ? UdpFrameCodec.NOT_FOR_US
            : UdpFrameCodec.udpOffset(MEMORY, frame, frameLength, localIp, localUdpPort);
        if (udp == UdpFrameCodec.NOT_FOR_US)
        {
            counters.increment(TransportCounter.DROP_NOT_FOR_US);
            return 0;
        }
        final int sourceIp = UdpFrameCodec.sourceIp(MEMORY, frame);
        final int sourcePort = UdpFrameCodec.sourcePort(MEMORY, frame, udp);
        int peer = peers.find(sourceIp, sourcePort);
        if (peer >= 0)
        {
            peer = peers.admit(peer, UdpFrameCodec.sourceMac(MEMORY, frame), link);
            if (peer >= maxPeers)
            {
                framesFromUnpinnedSources++;
            }
        }
        else
        {
            peer = learn(frame, sourceIp, sourcePort, link);
            if (peer == PeerTable.NO_PORT)
            {
                counters.increment(TransportCounter.DROP_SOURCE_PORT_ZERO);
                return 0;
            }
        }
        delivering = peer;
        final int length = UdpFrameCodec.messageLength(MEMORY, frame, udp);
        counters.received(length);
        handler.onMessage(MEMORY, frame + udp + UdpFrameCodec.UDP_LENGTH, length, peer);
        delivering = NO_PEER;
        return 1;
    }

    private int learn(final long frame, final int sourceIp, final int sourcePort, final int link)
    {
        final int peer = sourcePort == 0 ? PeerTable.NO_PORT
            : peers.learn(UdpFrameCodec.sourceMac(MEMORY, frame), sourceIp, sourcePort, link);
        if (peer >= 0)
        {
            peersLearned++;
        }
        else if (peer == NO_PEER)
        {
            counters.increment(TransportCounter.FROM_STRANGERS);
        }
        return peer;
    }

    private void bindThread()
    {
        owner = Thread.currentThread();
        if (Dpdk.lcoreId() == LCORE_ID_ANY)
        {
            final Eal eal = Eal.current();
            if (eal == null)
            {
                throw new IllegalStateException("EAL is no longer running");
            }
            eal.registerCurrentThread();
            registeredThread = true;
        }
    }

    @Override
    public String describePeer(final int peer)
    {
        return peers.describe(peer, config.links());
    }

    /** Peers known, given and learned. */
    public int peerCount()
    {
        return peers.count();
    }

    /** The DPDK port id of each link. */
    public int portId(final int link)
    {
        return linkPort[link];
    }

    /**
     * The {@code RTE_ETH_RSS_*} hash types in use on the port of {@code link}, when this transport configured it with
     * RSS; 0 when the port has no RSS or was configured by someone else.
     */
    public long rssHashTypes(final int link)
    {
        return ports.rssHashTypes(linkPort[link]);
    }

    public int linkCount()
    {
        return linkCount;
    }

    public MbufPool pool()
    {
        return pool;
    }

    @Override
    public TransportCounters counters()
    {
        return counters;
    }

    @Override
    public void countInto(final TransportCounters into)
    {
        counters.addTo(into);
        counters = into;
    }

    /** Frames the transmit queues took. Counters are written by the polling thread; other threads may see them late. */
    public long framesSent()
    {
        return tx.framesSent();
    }

    /** Frames received, whatever they held. */
    public long framesReceived()
    {
        return framesReceived;
    }

    public long peersLearned()
    {
        return peersLearned;
    }

    /**
     * Frames from a registered source's IPv4 address and UDP port but not from its pinned MAC (or before a JOIN pinned
     * one), handed up from its unpinned peer: a worker's first JOIN, or a forgery the switch drops.
     */
    public long framesFromUnpinnedSources()
    {
        return framesFromUnpinnedSources;
    }

    /** One line of the counters above and of {@link #counters()} that are not zero. */
    public String describeCounters()
    {
        return "frames sent " + tx.framesSent() + ", received " + framesReceived
            + ", from registered sources' addresses with an unpinned MAC " + framesFromUnpinnedSources
            + ", peers learned " + peersLearned + "; " + counters.describe();
    }

    /**
     * Frees every mbuf the transport holds (queued, claimed, stashed); when it started its ports, drains their receive
     * queues and stops and closes them. Call on the polling thread (agents close their transport in
     * {@code onClose}), or after it has stopped.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        tx.freeAll();
        final RuntimeException failure = ports.close(rxMbufs, burst);
        if (registeredThread && owner == Thread.currentThread() && Eal.current() != null)
        {
            Eal.current().unregisterCurrentThread();
            registeredThread = false;
        }
        owner = null;
        arena.close();
        if (failure != null)
        {
            throw failure;
        }
    }
}
