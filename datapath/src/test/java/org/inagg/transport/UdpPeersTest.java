package org.inagg.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A UDP transport's peers: the same numbers whichever I/O reports a sender, and source port 0 dropped and counted. */
@Timeout(10)
class UdpPeersTest
{
    private final List<String> told = new ArrayList<>();
    private final DatagramIo io = new DatagramIo()
    {
        @Override
        public int send(final SendQueue queue, final UdpPeers peers)
        {
            return 0;
        }

        @Override
        public int receive(final UdpPeers peers, final MessageHandler handler, final int limit)
        {
            return 0;
        }

        @Override
        public void peerAdded(final int peer, final InetSocketAddress address)
        {
            told.add(peer + "=" + address.getPort());
        }

        @Override
        public String describe()
        {
            return "test";
        }

        @Override
        public void close()
        {
        }

        @Override
        public String attachReusePortProgram(final ReusePortSteering program)
        {
            return "test";
        }
    };

    @Test
    void shouldNumberASenderTheSameByKeyAndByAddressAndTellTheIoOfEachNewPeer()
    {
        final UdpPeers peers = new UdpPeers(4, 4, io);
        final InetSocketAddress a = new InetSocketAddress("127.0.0.1", 9000);
        final InetSocketAddress b = new InetSocketAddress("127.0.0.1", 9001);
        assertThat(peers.add(a)).isZero();
        assertThat(peers.onDatagramFrom(UdpPeers.keyOf(a))).isZero();
        assertThat(peers.sender()).isEqualTo(a);
        assertThat(peers.onDatagramFrom(b)).as("learned").isEqualTo(1);
        assertThat(peers.onDatagramFrom(UdpPeers.keyOf(b))).isEqualTo(1);
        assertThat(peers.onDatagramFrom(UdpPeers.keyOf(new InetSocketAddress("127.0.0.1", 9002)))).isEqualTo(2);
        assertThat(peers.address(2)).isEqualTo(new InetSocketAddress("127.0.0.1", 9002));
        assertThat(told).containsExactly("0=9000", "1=9001", "2=9002");
    }

    @Test
    void shouldDropAndCountDatagramsFromSourcePortZero()
    {
        final UdpPeers peers = new UdpPeers(4, 4, io);
        final InetSocketAddress zero = new InetSocketAddress("127.0.0.1", 0);
        assertThat(peers.onDatagramFrom(zero)).isEqualTo(PeerTable.NO_PORT);
        assertThat(peers.onDatagramFrom(UdpPeers.keyOf(zero))).isEqualTo(PeerTable.NO_PORT);
        assertThat(peers.counters.get(TransportCounter.DROP_SOURCE_PORT_ZERO)).isEqualTo(2);
        assertThat(peers.numbers()).isZero();
        assertThat(told).isEmpty();
        assertThatThrownBy(() -> peers.add(zero)).isInstanceOf(IllegalArgumentException.class);
    }
}
