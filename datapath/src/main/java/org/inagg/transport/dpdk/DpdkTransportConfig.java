package org.inagg.transport.dpdk;

import java.util.ArrayList;
import java.util.List;

import org.inagg.ffi.dpdk.MbufPool;
import org.inagg.wire.InaggHeader;

/**
 * Settings of a {@link DpdkTransport}: fluent setters, then {@link #conclude()} fills defaults and validates once.
 *
 * <pre>{@code
 * new DpdkTransportConfig()
 *     .link("0000:3b:00.0", 0, 0)                 // or a vdev name such as net_memif0, or a port id
 *     .localMac("02:00:00:00:00:01").localIp("10.0.0.1").localUdpPort(9000)
 *     .peer(DpdkPeer.parse("02:00:00:00:00:02/10.0.0.2:9000"))
 *     .pool(pool);
 * }</pre>
 *
 * A <em>link</em> is one (port, rx queue, tx queue): a real NIC needs one; point-to-point virtual devices (net_ring
 * pairs, memif) give a switch one link per worker. Peers name the link they are reached through; a frame from an
 * unknown source becomes a peer on the link it arrived on.
 */
public final class DpdkTransportConfig
{
    public static final int LOCAL_UDP_PORT_DEFAULT = 9000;
    public static final int BURST_DEFAULT = 32;
    public static final int MAX_PEERS_DEFAULT = 256;
    public static final int DESCRIPTORS_DEFAULT = 1024;
    /** Messages of up to 363 lanes: a 1514-byte frame, the most a 1500-byte MTU carries. */
    /** Most peers a transport numbers (its unpinned peers are numbered above them: {@code DpdkPeers}). */
    public static final int MAX_PEERS = 1 << 24;
    public static final int MAX_MESSAGE_LENGTH_DEFAULT = InaggHeader.messageLength(363);

    /** One port queue pair the transport sends and receives on. */
    public record Link(String port, int rxQueue, int txQueue)
    {
        public Link
        {
            if (port == null || port.isBlank())
            {
                throw new IllegalArgumentException("a link needs a port name or id");
            }
            if (rxQueue < 0 || rxQueue > 0xFFFF || txQueue < 0 || txQueue > 0xFFFF)
            {
                throw new IllegalArgumentException("queues must be 0..65535, got rx " + rxQueue + " tx " + txQueue);
            }
        }

        @Override
        public String toString()
        {
            return port + (rxQueue == 0 && txQueue == 0 ? "" : " rxq " + rxQueue + " txq " + txQueue);
        }
    }

    private final List<Link> links = new ArrayList<>();
    private final List<DpdkPeer> peers = new ArrayList<>();
    private long localMac = -1;
    private int localIp;
    private boolean localIpSet;
    private int localUdpPort = LOCAL_UDP_PORT_DEFAULT;
    private int burst = BURST_DEFAULT;
    private int maxPeers = MAX_PEERS_DEFAULT;
    private int maxLearnedPeers = -1;
    private int maxMessageLength = MAX_MESSAGE_LENGTH_DEFAULT;
    private int descriptors = DESCRIPTORS_DEFAULT;
    private boolean startPorts = true;
    private boolean rss = true;
    private MbufPool pool;
    private boolean concluded;

    /** Adds a link on queue 0 of {@code port} (a device name such as {@code net_memif0}, or a port id). */
    public DpdkTransportConfig port(final String port)
    {
        return link(port, 0, 0);
    }

    /** Adds a link: receive on {@code rxQueue} and send on {@code txQueue} of {@code port}. */
    public DpdkTransportConfig link(final String port, final int rxQueue, final int txQueue)
    {
        links.add(new Link(port, rxQueue, txQueue));
        return this;
    }

    public DpdkTransportConfig localMac(final long mac)
    {
        this.localMac = mac;
        return this;
    }

    public DpdkTransportConfig localMac(final String mac)
    {
        return localMac(DpdkPeer.parseMac(mac));
    }

    /** Our IPv4 address: the destination received frames must carry. */
    public DpdkTransportConfig localIp(final int ip)
    {
        this.localIp = ip;
        this.localIpSet = true;
        return this;
    }

    public DpdkTransportConfig localIp(final String ip)
    {
        return localIp(DpdkPeer.parseIp(ip));
    }

    /** Our UDP port: source of sent frames, destination received frames must carry. Default 9000. */
    public DpdkTransportConfig localUdpPort(final int port)
    {
        this.localUdpPort = port;
        return this;
    }

    /** Adds a peer; peers are numbered from 0 in the order added. */
    public DpdkTransportConfig peer(final DpdkPeer peer)
    {
        peers.add(peer);
        return this;
    }

    /** Messages per receive and per transmit burst. Default 32. */
    public DpdkTransportConfig burst(final int burst)
    {
        this.burst = burst;
        return this;
    }

    /** Most peers, learned ones included; messages from sources beyond it are handed up with peer -1. */
    public DpdkTransportConfig maxPeers(final int maxPeers)
    {
        this.maxPeers = maxPeers;
        return this;
    }

    /**
     * Most peers learned from strangers' frames (0..maxPeers; default maxPeers): a switch that registers its workers'
     * sources at run time (its controller) keeps {@code maxPeers - maxLearnedPeers} numbers for them, whatever a flood
     * from many source ports does ({@link org.inagg.transport.PeerTable}).
     */
    public DpdkTransportConfig maxLearnedPeers(final int maxLearnedPeers)
    {
        this.maxLearnedPeers = maxLearnedPeers;
        return this;
    }

    /** Largest message (inagg header and lanes). Default {@link #MAX_MESSAGE_LENGTH_DEFAULT}. */
    public DpdkTransportConfig maxMessageLength(final int maxMessageLength)
    {
        this.maxMessageLength = maxMessageLength;
        return this;
    }

    /** Descriptors per queue when the transport sets up the ports. Default 1024. */
    public DpdkTransportConfig descriptors(final int descriptors)
    {
        this.descriptors = descriptors;
        return this;
    }

    /**
     * Whether the transport configures, starts, and on close drains, stops and closes its ports (default), or finds
     * them started by the caller, who then stops them (ports whose queues several transports share).
     */
    public DpdkTransportConfig startPorts(final boolean startPorts)
    {
        this.startPorts = startPorts;
        return this;
    }

    /**
     * When the transport configures a port with more than one receive queue: whether to ask for receive-side scaling
     * by UDP/IPv4 4-tuple ({@link org.inagg.ffi.dpdk.EthPort#RSS_IPV4_UDP}), so that a NIC spreads frames from
     * distinct sources over the queues (default), or to configure it without RSS. Devices that offer no such hashing
     * (net_ring, for one) are configured without RSS either way. Ignored with {@code startPorts(false)}: whoever
     * configures shared ports chooses ({@link org.inagg.ffi.dpdk.EthPort#configureRss}).
     */
    public DpdkTransportConfig rss(final boolean rss)
    {
        this.rss = rss;
        return this;
    }

    /** The pool frames are sent from and, when the transport starts its ports, received into. Required. */
    public DpdkTransportConfig pool(final MbufPool pool)
    {
        this.pool = pool;
        return this;
    }

    public List<Link> links()
    {
        return List.copyOf(links);
    }

    public List<DpdkPeer> peers()
    {
        return List.copyOf(peers);
    }

    public long localMac()
    {
        return localMac;
    }

    public int localIp()
    {
        return localIp;
    }

    public int localUdpPort()
    {
        return localUdpPort;
    }

    public int burst()
    {
        return burst;
    }

    public int maxPeers()
    {
        return maxPeers;
    }

    /** Most peers learned from strangers' frames: {@link #maxLearnedPeers(int)}, or maxPeers when not set. */
    public int maxLearnedPeers()
    {
        return maxLearnedPeers < 0 ? maxPeers : maxLearnedPeers;
    }

    public int maxMessageLength()
    {
        return maxMessageLength;
    }

    public int descriptors()
    {
        return descriptors;
    }

    public boolean startPorts()
    {
        return startPorts;
    }

    public boolean rss()
    {
        return rss;
    }

    public MbufPool pool()
    {
        return pool;
    }

    /**
     * Validates once.
     *
     * @return this.
     * @throws IllegalArgumentException naming the bad setting.
     */
    public DpdkTransportConfig conclude()
    {
        if (concluded)
        {
            return this;
        }
        if (links.isEmpty())
        {
            throw new IllegalArgumentException("a DPDK transport needs at least one port (link)");
        }
        if (localMac < 0 || (localMac & ~0xFFFF_FFFF_FFFFL) != 0)
        {
            throw new IllegalArgumentException("localMac must be set to a 48-bit MAC address");
        }
        if (!localIpSet)
        {
            throw new IllegalArgumentException("localIp must be set");
        }
        if (localUdpPort < 1 || localUdpPort > 0xFFFF)
        {
            throw new IllegalArgumentException("localUdpPort must be 1..65535, got " + localUdpPort);
        }
        if (burst < 1 || burst > 512)
        {
            throw new IllegalArgumentException("burst must be 1..512, got " + burst);
        }
        if (maxPeers < Math.max(1, peers.size()))
        {
            throw new IllegalArgumentException("maxPeers " + maxPeers + " is less than the " + peers.size()
                + " peers given (and at least 1)");
        }
        if (maxPeers > MAX_PEERS)
        {
            throw new IllegalArgumentException("maxPeers must be at most " + MAX_PEERS + ", got " + maxPeers);
        }
        if (maxLearnedPeers > maxPeers)
        {
            throw new IllegalArgumentException("maxLearnedPeers must be in 0.." + maxPeers + ", got "
                + maxLearnedPeers);
        }
        if (maxMessageLength < InaggHeader.LENGTH || maxMessageLength > 0xFFFF - 28)
        {
            throw new IllegalArgumentException("maxMessageLength must be " + InaggHeader.LENGTH + ".." + (0xFFFF - 28)
                + ", got " + maxMessageLength);
        }
        if (descriptors < 1 || descriptors > 0xFFFF)
        {
            throw new IllegalArgumentException("descriptors must be 1..65535, got " + descriptors);
        }
        if (pool == null)
        {
            throw new IllegalArgumentException("pool must be set");
        }
        for (final DpdkPeer peer : peers)
        {
            if (peer.link() >= links.size())
            {
                throw new IllegalArgumentException("peer " + peer + " names link " + peer.link() + " but there are "
                    + links.size() + " links");
            }
        }
        concluded = true;
        return this;
    }

    @Override
    public String toString()
    {
        return "DpdkTransportConfig{links=" + links + ", local=" + DpdkPeer.formatMac(Math.max(0, localMac)) + "/"
            + DpdkPeer.formatIp(localIp) + ":" + localUdpPort + ", peers=" + peers + ", burst=" + burst + "}";
    }
}
