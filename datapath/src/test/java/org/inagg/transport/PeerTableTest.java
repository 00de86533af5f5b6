package org.inagg.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one peer table of the transports: its learning rule, as PeerTable's Javadoc states it. */
@Timeout(10)
class PeerTableTest
{
    private static final int IP = 0x0A00_0001;

    @Test
    void shouldNumberRegisteredPeersInOrderAndFindThemAgain()
    {
        final PeerTable table = new PeerTable(4, 4);
        assertThat(table.register(PeerTable.key(IP, 9000))).isZero();
        assertThat(table.register(PeerTable.key(IP, 9001))).isEqualTo(1);
        assertThat(table.register(PeerTable.key(IP, 9000))).isZero();
        assertThat(table.find(PeerTable.key(IP, 9001))).isEqualTo(1);
        assertThat(table.find(PeerTable.key(IP + 1, 9001))).isEqualTo(PeerTable.NO_PEER);
        assertThat(table.size()).isEqualTo(2);
        assertThat(table.keyOf(1)).isEqualTo(PeerTable.key(IP, 9001));
    }

    @Test
    void shouldLearnStrangersOnlyWithinTheirShareAndLetRegistrationsPinThem()
    {
        final PeerTable table = new PeerTable(4, 2);
        assertThat(table.learn(PeerTable.key(IP, 1))).isZero();
        assertThat(table.learn(PeerTable.key(IP, 2))).isEqualTo(1);
        assertThat(table.learn(PeerTable.key(IP, 3))).as("learned share used").isEqualTo(PeerTable.NO_PEER);
        assertThat(table.register(PeerTable.key(IP, 1))).as("pinned: the same number").isZero();
        assertThat(table.learnedCount()).isEqualTo(1);
        assertThat(table.learn(PeerTable.key(IP, 3))).isEqualTo(2);
        assertThat(table.register(PeerTable.key(IP, 4))).isEqualTo(3);
        assertThat(table.register(PeerTable.key(IP, 5))).as("table full").isEqualTo(PeerTable.NO_PEER);
    }

    @Test
    void shouldReuseTheNumberOfARemovedPeer()
    {
        final PeerTable table = new PeerTable(2, 2);
        table.register(PeerTable.key(IP, 1));
        table.learn(PeerTable.key(IP, 2));
        assertThat(table.remove(1)).isTrue();
        assertThat(table.remove(1)).isFalse();
        assertThat(table.contains(1)).isFalse();
        assertThat(table.find(PeerTable.key(IP, 2))).isEqualTo(PeerTable.NO_PEER);
        assertThat(table.learnedCount()).isZero();
        assertThat(table.learn(PeerTable.key(IP, 3))).isEqualTo(1);
        assertThat(table.numbers()).isEqualTo(2);
    }

    @Test
    void shouldNeverTakeSourcePortZeroAsAPeer()
    {
        final PeerTable table = new PeerTable(4, 4);
        assertThat(table.find(PeerTable.key(IP, 0))).isEqualTo(PeerTable.NO_PORT);
        assertThat(table.learn(PeerTable.key(IP, 0))).isEqualTo(PeerTable.NO_PORT);
        assertThatThrownBy(() -> table.register(PeerTable.key(IP, 0))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("10.0.0.1:0");
        assertThat(table.size()).isZero();
    }

    @Test
    void shouldKeepAddressesAboveTheSignBitApart()
    {
        final PeerTable table = new PeerTable(4, 4);
        final int high = 0xC0A8_0001;
        assertThat(table.register(PeerTable.key(high, 65_535))).isZero();
        assertThat(PeerTable.ipOf(PeerTable.key(high, 65_535))).isEqualTo(high);
        assertThat(PeerTable.portOf(PeerTable.key(high, 65_535))).isEqualTo(65_535);
        assertThat(PeerTable.describe(PeerTable.key(high, 65_535))).isEqualTo("192.168.0.1:65535");
        assertThat(table.find(PeerTable.key(high, 65_534))).isEqualTo(PeerTable.NO_PEER);
    }
}
