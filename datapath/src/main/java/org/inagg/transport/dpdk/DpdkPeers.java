package org.inagg.transport.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import org.inagg.transport.PeerTable;
import org.inagg.transport.Transport;
import org.inagg.transport.frame.UdpFrameCodec;

/**
 * The peers of a {@link DpdkTransport}: numbered by a {@link PeerTable} (its learning rule: given peers from 0, then
 * every new source up to {@link DpdkTransportConfig#maxLearnedPeers()}; source port 0 is never a peer), and per peer
 * its MAC, link, and a template of the 42 header bytes of a frame to it ({@link UdpFrameCodec#writeTemplate}) with the
 * IPv4 header's sum so far, so that a frame's headers cost one 42-byte copy and {@link UdpFrameCodec#completeLengths}.
 * <p>
 * <b>Registered sources are pinned to a MAC.</b> A peer is one of:
 * <pre>
 *   state      how it came                             a frame from its ip:port is its own when
 *   GIVEN      configuration (DpdkPeer: MAC and link)  always (its MAC is the operator's word)
 *   LEARNED    a stranger's frame (open mode)          always (ip:port is all it is)
 *   UNPINNED   {@link #addSource} (ip:port only)          never: none is, until a JOIN pins one
 *   PINNED     {@link #pin} of an UNPINNED or PINNED    its source MAC is the pinned one
 * </pre>
 * A frame from a registered source's ip:port that is not its own is handed up as the source's <i>unpinned</i> peer,
 * number {@code maxPeers + peer}, with its MAC and link kept as that peer's candidate (the latest such frame's, written
 * over in place: a flood of MACs takes no memory). The node decides from the message whether the candidate may speak
 * for the source (a JOIN it accepts: {@link Transport#pin}); anything else from it fails the node's source check, as a
 * forged ip:port does over UDP. Claims to an unpinned peer answer its candidate (a JOIN's REJECT); claims to an
 * UNPINNED source fail (no link-layer address is known for it).
 * <p>
 * A source registered over a LEARNED peer becomes UNPINNED (a stranger's frame sent before the registration pins
 * nothing); over a GIVEN peer, PINNED to the given MAC. {@link #remove} forgets a peer and its pin. Nothing here
 * allocates after construction except the table's growth when a peer is added.
 */
final class DpdkPeers
{
    private static final int TEMPLATE_STRIDE = 64;
    private static final byte GIVEN = 0;
    private static final byte LEARNED = 1;
    private static final byte UNPINNED = 2;
    private static final byte PINNED = 3;

    private final PeerTable table;
    private final int maxPeers;
    private final long localMac;
    private final int localIp;
    private final int localUdpPort;
    private final int linkCount;
    private final long[] mac;
    private final int[] link;
    private final byte[] state;
    private final int[] partialChecksum;
    private final long[] candidateMac;
    private final int[] candidateLink;
    private final MemorySegment templates;

    DpdkPeers(final DpdkTransportConfig config, final Arena arena)
    {
        this.maxPeers = config.maxPeers();
        this.table = new PeerTable(maxPeers, config.maxLearnedPeers());
        this.localMac = config.localMac();
        this.localIp = config.localIp();
        this.localUdpPort = config.localUdpPort();
        this.linkCount = config.links().size();
        this.mac = new long[maxPeers];
        this.link = new int[maxPeers];
        this.state = new byte[maxPeers];
        this.partialChecksum = new int[maxPeers];
        this.candidateMac = new long[maxPeers];
        this.candidateLink = new int[maxPeers];
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
            remember(p, peer.mac(), peer.ip(), peer.udpPort(), peer.link(), GIVEN);
        }
        return p;
    }

    /**
     * Registers the source {@code ip:port} (a job's worker), whose MAC and link the first JOIN the node accepts from it
     * pins: its number, or {@link PeerTable#NO_PEER} when the table is full.
     *
     * @throws IllegalArgumentException for port 0.
     */
    int addSource(final int ip, final int port)
    {
        final long key = PeerTable.key(ip, port);
        final int known = table.find(key);
        final int p = table.register(key);
        if (p < 0)
        {
            return p;
        }
        if (known < 0 || state[p] == LEARNED)
        {
            remember(p, 0, ip, port, 0, UNPINNED);
        }
        else if (state[p] == GIVEN)
        {
            state[p] = PINNED;
        }
        return p;
    }

    /** Forgets peer {@code peer} and its pin: its frames are a stranger's again. */
    boolean remove(final int peer)
    {
        return table.remove(peer);
    }

    /** The number of the source {@code ip:port}, {@link PeerTable#NO_PEER} or {@link PeerTable#NO_PORT}. */
    int find(final int ip, final int port)
    {
        return table.find(PeerTable.key(ip, port));
    }

    /**
     * The peer a frame from peer {@code peer}'s ip:port with source MAC {@code sourceMac}, received on
     * {@code sourceLink}, is handed up from: {@code peer} itself, or its unpinned peer (the frame's MAC and link kept
     * as its candidate).
     */
    int admit(final int peer, final long sourceMac, final int sourceLink)
    {
        final byte s = state[peer];
        if (s == PINNED ? mac[peer] == sourceMac : s != UNPINNED)
        {
            return peer;
        }
        candidateMac[peer] = sourceMac;
        candidateLink[peer] = sourceLink;
        return maxPeers + peer;
    }

    /** The registered source whose unpinned peer {@code peer} is, or {@link Transport#NO_PEER}. */
    int claimedPeer(final int peer)
    {
        final int source = peer - maxPeers;
        return source >= 0 && source < maxPeers && table.contains(source) && state[source] >= UNPINNED ? source
            : Transport.NO_PEER;
    }

    /** Whether {@code peer} has its MAC: given, learned or pinned (not a registered source no JOIN pinned yet). */
    boolean isPinned(final int peer)
    {
        return !table.contains(peer) || state[peer] != UNPINNED;
    }

    /** Pins the candidate of unpinned peer {@code unpinnedPeer} (from {@link #admit}) to its registered source. */
    void pin(final int unpinnedPeer)
    {
        final int p = unpinnedPeer - maxPeers;
        final long key = table.keyOf(p);
        remember(p, candidateMac[p], PeerTable.ipOf(key), PeerTable.portOf(key), candidateLink[p], PINNED);
    }

    private void remember(final int p, final long peerMac, final int ip, final int port, final int peerLink,
        final byte how)
    {
        mac[p] = peerMac;
        link[p] = peerLink;
        state[p] = how;
        partialChecksum[p] = UdpFrameCodec.writeTemplate(templates, (long)p * TEMPLATE_STRIDE, localMac, localIp,
            localUdpPort, peerMac, ip, port);
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
            remember(p, sourceMac, ip, port, sourceLink, LEARNED);
        }
        return p;
    }

    /**
     * Whether a frame can be sent to {@code peer}: a peer with its MAC, or an unpinned peer (to its candidate, the
     * sender of the latest frame from the source's ip:port with another MAC).
     */
    boolean contains(final int peer)
    {
        if (peer >= 0 && peer < maxPeers)
        {
            return table.contains(peer) && state[peer] != UNPINNED;
        }
        return claimedPeer(peer) >= 0;
    }

    /** Peers known, given, registered and learned. */
    int count()
    {
        return table.size();
    }

    /** The link peer {@code peer} (one {@link #contains} accepts) is reached through. */
    int link(final int peer)
    {
        return peer < maxPeers ? link[peer] : candidateLink[peer - maxPeers];
    }

    /** Writes the 42 header bytes of a frame to {@code peer} carrying {@code messageLength} bytes at {@code frame}. */
    void writeHeaders(final int peer, final MemorySegment memory, final long frame, final int messageLength)
    {
        if (peer < maxPeers)
        {
            MemorySegment.copy(templates, (long)peer * TEMPLATE_STRIDE, memory, frame, UdpFrameCodec.HEADERS_LENGTH);
            UdpFrameCodec.completeLengths(memory, frame, partialChecksum[peer], messageLength);
            return;
        }
        // An unpinned peer's candidate: answered rarely (a REJECT of its JOIN), so no template is kept for it.
        final int p = peer - maxPeers;
        final long key = table.keyOf(p);
        UdpFrameCodec.completeLengths(memory, frame, UdpFrameCodec.writeTemplate(memory, frame, localMac, localIp,
            localUdpPort, candidateMac[p], PeerTable.ipOf(key), PeerTable.portOf(key)), messageLength);
    }

    /** The IPv4 address and UDP port of peer {@code peer} as a {@link PeerTable#key}, or -1 when there is none. */
    long keyOf(final int peer)
    {
        return table.contains(peer) ? table.keyOf(peer) : -1;
    }

    String describe(final int peer, final List<DpdkTransportConfig.Link> links)
    {
        final int source = claimedPeer(peer);
        if (source >= 0)
        {
            return "dpdk://" + PeerTable.describe(table.keyOf(source)) + " from " + DpdkPeer.formatMac(
                candidateMac[source]) + " via " + links.get(candidateLink[source]) + " (not the source's pinned MAC"
                + (state[source] == PINNED ? ", " + DpdkPeer.formatMac(mac[source]) : ": none pinned yet") + ")";
        }
        if (!table.contains(peer))
        {
            return "unknown peer " + peer;
        }
        final long key = table.keyOf(peer);
        if (state[peer] == UNPINNED)
        {
            return "dpdk://" + PeerTable.describe(key) + " (registered; no MAC pinned yet)";
        }
        return "dpdk://" + PeerTable.describe(key) + " (" + DpdkPeer.formatMac(mac[peer]) + " via "
            + links.get(link[peer]) + (state[peer] == PINNED ? ", pinned" : "") + ")";
    }
}
