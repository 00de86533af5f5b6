package org.inagg.transport.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

import org.inagg.transport.PeerTable;
import org.inagg.transport.Transport;
import org.inagg.transport.frame.UdpFrameCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pinning rule of registered sources ({@link DpdkPeers}, no DPDK needed): a source registered by IPv4 address
 * and UDP port is nobody's until a JOIN pins a MAC; from then on only that MAC's frames are its own, another MAC's
 * come from its unpinned peer; given and learned peers are not checked, as before.
 */
class DpdkPeersTest
{
    private static final int MAX_PEERS = 4;
    private static final long MAC_SWITCH = 0x02_00_00_00_00_01L;
    private static final long MAC_WORKER = 0x02_00_00_00_01_01L;
    private static final long MAC_FORGER = 0x02_00_00_00_0E_0EL;
    private static final long MAC_NEW_NIC = 0x02_00_00_00_01_99L;
    private static final int IP_WORKER = 0x0A_00_01_01;
    private static final int PORT = 9000;
    private static final List<DpdkTransportConfig.Link> LINKS = List.of(new DpdkTransportConfig.Link("net_ring0", 0, 0),
        new DpdkTransportConfig.Link("net_ring1", 0, 0));

    private final Arena arena = Arena.ofConfined();
    private final DpdkPeers peers = new DpdkPeers(new DpdkTransportConfig().link("net_ring0", 0, 0)
        .link("net_ring1", 0, 0).localMac(MAC_SWITCH).localIp(0x0A_00_00_01).localUdpPort(PORT).maxPeers(MAX_PEERS)
        .maxLearnedPeers(2), arena);

    @AfterEach
    void close()
    {
        arena.close();
    }

    @Test
    void shouldHandUpARegisteredSourcesFramesFromItsUnpinnedPeerUntilAJoinPinsItsMac()
    {
        final int source = peers.addSource(IP_WORKER, PORT);
        assertThat(source).isZero();
        assertThat(peers.isPinned(source)).isFalse();
        assertThat(peers.contains(source)).as("no MAC to send to yet").isFalse();
        assertThat(peers.describe(source, LINKS)).contains("10.0.1.1:9000").contains("no MAC pinned yet");

        final int unpinned = peers.admit(peers.find(IP_WORKER, PORT), MAC_WORKER, 1);
        assertThat(unpinned).isEqualTo(MAX_PEERS + source);
        assertThat(peers.claimedPeer(unpinned)).isEqualTo(source);
        assertThat(peers.contains(unpinned)).as("its REJECT can be answered").isTrue();
        assertThat(peers.link(unpinned)).isEqualTo(1);
        assertThat(peers.describe(unpinned, LINKS)).contains("from 02:00:00:00:01:01").contains("none pinned yet");

        peers.pin(unpinned);
        assertThat(peers.isPinned(source)).isTrue();
        assertThat(peers.contains(source)).isTrue();
        assertThat(peers.link(source)).isEqualTo(1);
        assertThat(peers.admit(source, MAC_WORKER, 1)).as("the pinned MAC's frames are the source's").isEqualTo(source);
        assertThat(peers.admit(source, MAC_WORKER, 0)).as("on any link").isEqualTo(source);
        assertThat(peers.describe(source, LINKS)).contains("02:00:00:00:01:01").contains("pinned");
    }

    @Test
    void shouldHandUpAnotherMacsFramesFromTheUnpinnedPeerOnceAMacIsPinnedAttack()
    {
        final int source = peers.addSource(IP_WORKER, PORT);
        peers.pin(peers.admit(source, MAC_WORKER, 0));

        final int forged = peers.admit(source, MAC_FORGER, 1);
        assertThat(forged).isEqualTo(MAX_PEERS + source);
        assertThat(peers.claimedPeer(forged)).isEqualTo(source);
        assertThat(peers.isPinned(source)).as("a forged frame moves nothing").isTrue();
        assertThat(peers.link(source)).isZero();
        assertThat(peers.admit(source, MAC_WORKER, 0)).isEqualTo(source);
        assertThat(peers.describe(forged, LINKS)).contains("from 02:00:00:00:0e:0e")
            .contains("not the source's pinned MAC, 02:00:00:00:01:01");

        // a frame to the source goes to the pinned MAC; a REJECT to the unpinned peer goes to the forger's
        assertThat(destinationMac(source)).isEqualTo(MAC_WORKER);
        assertThat(destinationMac(forged)).isEqualTo(MAC_FORGER);
        assertThat(destinationMac(source)).as("and leaves the source's template alone").isEqualTo(MAC_WORKER);

        // a JOIN the switch accepts with the worker's credential (a restarted rank on a new NIC) may re-pin
        final int newNic = peers.admit(source, MAC_NEW_NIC, 1);
        peers.pin(newNic);
        assertThat(peers.admit(source, MAC_NEW_NIC, 1)).isEqualTo(source);
        assertThat(peers.admit(source, MAC_WORKER, 0)).isEqualTo(MAX_PEERS + source);
        assertThat(destinationMac(source)).isEqualTo(MAC_NEW_NIC);
    }

    @Test
    void shouldPinNothingFromAStrangersFrameThatCameBeforeTheRegistrationAttack()
    {
        final int learned = peers.learn(MAC_FORGER, IP_WORKER, PORT, 0);
        assertThat(peers.admit(learned, MAC_FORGER, 0)).as("a learned peer is ip:port only").isEqualTo(learned);

        final int source = peers.addSource(IP_WORKER, PORT);
        assertThat(source).isEqualTo(learned);
        assertThat(peers.isPinned(source)).isFalse();
        assertThat(peers.admit(source, MAC_FORGER, 0)).isEqualTo(MAX_PEERS + source);
    }

    @Test
    void shouldKeepGivenAndLearnedPeersUncheckedAndPinAGivenPeerRegisteredAsASourceToItsMac()
    {
        final int given = peers.add(new DpdkPeer(MAC_WORKER, IP_WORKER, PORT, 0));
        assertThat(peers.admit(given, MAC_FORGER, 0)).isEqualTo(given);
        assertThat(peers.claimedPeer(MAX_PEERS + given)).isEqualTo(Transport.NO_PEER);
        final int learned = peers.learn(MAC_FORGER, IP_WORKER + 1, PORT, 0);
        assertThat(peers.admit(learned, MAC_WORKER, 1)).isEqualTo(learned);

        assertThat(peers.addSource(IP_WORKER, PORT)).isEqualTo(given);
        assertThat(peers.isPinned(given)).isTrue();
        assertThat(peers.admit(given, MAC_WORKER, 0)).isEqualTo(given);
        assertThat(peers.admit(given, MAC_FORGER, 0)).isEqualTo(MAX_PEERS + given);
    }

    @Test
    void shouldForgetThePinWithThePeerAndAnswerNoPeerForNumbersThatAreNoUnpinnedPeer()
    {
        final int source = peers.addSource(IP_WORKER, PORT);
        peers.pin(peers.admit(source, MAC_WORKER, 0));
        assertThat(peers.remove(source)).isTrue();
        assertThat(peers.contains(source)).isFalse();
        assertThat(peers.claimedPeer(MAX_PEERS + source)).isEqualTo(Transport.NO_PEER);
        assertThat(peers.find(IP_WORKER, PORT)).isEqualTo(PeerTable.NO_PEER);
        assertThat(peers.keyOf(source)).isEqualTo(-1);

        final int again = peers.addSource(IP_WORKER, PORT);
        assertThat(peers.isPinned(again)).as("registered afresh: the next JOIN pins").isFalse();
        for (final int notUnpinned : new int[] {-1, 0, MAX_PEERS - 1, MAX_PEERS + 1, 2 * MAX_PEERS, Integer.MAX_VALUE})
        {
            assertThat(peers.claimedPeer(notUnpinned)).as("peer %d", notUnpinned).isEqualTo(Transport.NO_PEER);
        }
        assertThat(peers.keyOf(again)).isEqualTo(PeerTable.key(IP_WORKER, PORT));
    }

    private long destinationMac(final int peer)
    {
        final MemorySegment frame = arena.allocate(64);
        peers.writeHeaders(peer, frame, 0, 20);
        final long high = frame.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 0) & 0xFFFFL;
        final long low = frame.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 2) & 0xFFFF_FFFFL;
        assertThat(UdpFrameCodec.sourceMac(frame, 0)).isEqualTo(MAC_SWITCH);
        return high << 32 | low;
    }
}
