package org.inagg.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The peer table of a UDP transport: strangers' datagrams may fill only their share of it (half, as a controlled
 * switch opens it), registration pins a learned peer, and a removed peer's number is reused.
 */
class UdpTransportPeersTest
{
    private static final InetSocketAddress ANY_LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    @Test
    @Timeout(30)
    void shouldLeaveHalfTheTableToRegistrationsWhateverStrangersSend() throws Exception
    {
        final List<DatagramSocket> strangers = new ArrayList<>();
        try (UdpTransport transport = UdpTransport.open(ANY_LOOPBACK, List.of(), 64, 32, 64, 4))
        {
            for (int i = 0; i < 40; i++)
            {
                final DatagramSocket stranger = new DatagramSocket(0, InetAddress.getLoopbackAddress());
                strangers.add(stranger);
                stranger.send(new DatagramPacket(new byte[8], 8, transport.localAddress()));
            }
            final List<Integer> seen = new ArrayList<>();
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (seen.size() < 40 && System.nanoTime() - deadline < 0)
            {
                transport.poll((buffer, offset, length, peer) -> seen.add(peer), 64);
            }
            assertThat(seen).hasSize(40);
            assertThat(seen.stream().filter(peer -> peer >= 0)).as("learned").hasSize(32);
            assertThat(seen.stream().filter(peer -> peer < 0)).as("beyond the learned share").hasSize(8);
            assertThat(transport.counters().get(TransportCounter.FROM_STRANGERS)).isEqualTo(8);
            assertThat(transport.counters().get(TransportCounter.MESSAGES_RECEIVED)).isEqualTo(40);
            assertThat(transport.counters().get(TransportCounter.BYTES_RECEIVED)).isEqualTo(40 * 8);

            // 32 numbers are left for registrations, whatever strangers keep sending (registered on another address
            // than the strangers' loopback one: an ephemeral port of theirs may be any number).
            for (int i = 0; i < 32; i++)
            {
                assertThat(transport.addPeer(new InetSocketAddress("10.255.0.1", 50_000 + i))).isEqualTo(32 + i);
            }
            assertThat(transport.addPeer(new InetSocketAddress("10.255.0.1", 49_999))).isEqualTo(-1);
        }
        finally
        {
            strangers.forEach(DatagramSocket::close);
        }
    }

    @Test
    @Timeout(30)
    void shouldReuseTheNumberOfARemovedPeer()
    {
        try (UdpTransport transport = UdpTransport.open(ANY_LOOPBACK, List.of(), 4, 64, 4))
        {
            final InetSocketAddress a = new InetSocketAddress("127.0.0.1", 50_001);
            final InetSocketAddress b = new InetSocketAddress("127.0.0.1", 50_002);
            assertThat(transport.addPeer(a)).isZero();
            assertThat(transport.addPeer(new InetSocketAddress("127.0.0.1", 50_003))).isEqualTo(1);

            assertThat(transport.removePeer(0)).isTrue();
            assertThat(transport.removePeer(0)).as("already removed").isFalse();
            assertThat(transport.peerAddress(0)).isNull();
            assertThat(transport.describePeer(0)).isEqualTo("unknown peer 0");

            assertThat(transport.addPeer(b)).as("the freed number").isZero();
            assertThat(transport.peerAddress(0)).isEqualTo(b);
            assertThat(transport.addPeer(a)).as("a is a new peer now").isEqualTo(2);
        }
    }
}
