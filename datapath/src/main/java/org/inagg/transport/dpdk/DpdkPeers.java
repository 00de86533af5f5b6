package org.inagg.transport.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import org.inagg.transport.PeerTable;
import org.inagg.transport.frame.UdpFrameCodec;

/**
 * The peers of a {@link DpdkTransport}: numbered by a {@link PeerTable} (its learning rule: given peers from 0, then
 * every new source up to {@link DpdkTransportConfig#maxPeers()}; source port 0 is never a peer), and per peer its MAC,
 * link, and a template of the 42 header bytes of a frame to it ({@link UdpFrameCodec#writeTemplate}) with the IPv4
 * header's sum so far, so that a frame's headers cost one 42-byte copy and {@link UdpFrameCodec#completeLengths}.
 * Peers are never removed.
 */
final class DpdkPeers
{
    private static final int TEMPLATE_STRIDE = 64;

    private final PeerTable table;
    private final long localMac;
    private final int localIp;
    private final int localUdpPort;
    private final int linkCount;
    private final long[] mac;
    private final int[] link;
    private final int[] partialChecksum;
    private final MemorySegment templates;

    DpdkPeers(final DpdkTransportConfig config, final Arena arena)
    {
        final int maxPeers = config.maxPeers();
        this.table = new PeerTable(maxPeers, maxPeers);
        this.localMac = config.localMac();
        this.localIp = config.localIp();
        this.localUdpPort = config.localUdpPort();
        this.linkCount = config.links().size();
        this.mac = new long[maxPeers];
        this.link = new int[maxPeers];
        this.partialChecksum = new int[maxPeers];
        this.templates = arena.allocate((long)TEMPLATE_STRIDE * maxPeers, 64);
    }

    /** Registers {@code peer} (or finds it by IPv4 address and UDP port): its number, or -1 when the table is full. */
    int add(final DpdkPeer peer)
    {
        if (peer.link() >= linkCount)
        {
            throw new IllegalArgumentException("peer " + peer + " names link " + peer.link() + " of " + linkCount);
        }
        final int known = table.find(PeerTable.key(peer.ip(), peer.udpPort()));
        if (known >= 0)
        {
            return known;
        }
        final int p = table.register(PeerTable.key(peer.ip(), peer.udpPort()));
        if (p >= 0)
        {
            remember(p, peer.mac(), peer.ip(), peer.udpPort(), peer.link());
        }
        return p;
    }

    /** The number of the source {@code ip:port}, {@link PeerTable#NO_PEER} or {@link PeerTable#NO_PORT}. */
    int find(final int ip, final int port)
    {
        return table.find(PeerTable.key(ip, port));
    }

    /**
     * Learns a new source reached through {@code link}: its number, {@link PeerTable#NO_PEER} when the table is full,
     * {@link PeerTable#NO_PORT} for source port 0.
     */
    int learn(final long sourceMac, final int ip, final int port, final int sourceLink)
    {
        final int p = table.learn(PeerTable.key(ip, port));
        if (p >= 0)
        {
            remember(p, sourceMac, ip, port, sourceLink);
        }
        return p;
    }

    private void remember(final int p, final long peerMac, final int ip, final int port, final int peerLink)
    {
        mac[p] = peerMac;
        link[p] = peerLink;
        partialChecksum[p] = UdpFrameCodec.writeTemplate(templates, (long)p * TEMPLATE_STRIDE, localMac, localIp,
            localUdpPort, peerMac, ip, port);
    }

    /** Whether {@code peer} is a peer. */
    boolean contains(final int peer)
    {
        return peer >= 0 && peer < table.numbers();
    }

    /** Peers known, given and learned. */
    int count()
    {
        return table.size();
    }

    /** The link peer {@code peer} is reached through. */
    int link(final int peer)
    {
        return link[peer];
    }

    /** Writes the 42 header bytes of a frame to {@code peer} carrying {@code messageLength} bytes at {@code frame}. */
    void writeHeaders(final int peer, final MemorySegment memory, final long frame, final int messageLength)
    {
        MemorySegment.copy(templates, (long)peer * TEMPLATE_STRIDE, memory, frame, UdpFrameCodec.HEADERS_LENGTH);
        UdpFrameCodec.completeLengths(memory, frame, partialChecksum[peer], messageLength);
    }

    String describe(final int peer, final List<DpdkTransportConfig.Link> links)
    {
        if (!contains(peer))
        {
            return "unknown peer " + peer;
        }
        final long key = table.keyOf(peer);
        return "dpdk://" + PeerTable.describe(key) + " (" + DpdkPeer.formatMac(mac[peer]) + " via "
            + links.get(link[peer]) + ")";
    }
}
