package org.inagg.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.peers.FabricPlacement;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The leaf-spine fabric's wiring: hosts in contiguous blocks under the leaves, a token bucket on both ends of every
 * host link and uplink at its rate, hosts under different leaves reaching each other (across both uplinks) and the
 * spine's address, bad arguments refused before anything exists, nothing left after close.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LeafSpineClusterTest
{
    @BeforeEach
    void requireNamespaces()
    {
        EmulatedClusterTest.requireCluster();
    }

    @Test
    void shouldWireHostsUnderLeavesWithBothEndsOfEveryLinkLimited()
    {
        final LeafSpineFabric kept;
        try (LeafSpineFabric fabric = LeafSpineFabric.create(5, 2, LinkRate.parse("40mbit"),
            LinkRate.parse("30mbit"), 1500, 20))
        {
            kept = fabric;
            assertThat(fabric.describe()).contains("5 hosts under 2 leaves").contains("40 Mbit/s host links")
                .contains("30 Mbit/s uplinks");
            assertThat(List.of(1, 2, 3, 4, 5).stream().map(fabric::leafOfHost)).containsExactly(1, 1, 1, 2, 2);
            final FabricPlacement placement = fabric.placement();
            assertThat(placement.mostHostsPerLeaf(5)).isEqualTo(3);
            assertThat(placement.leafOf(4)).isEqualTo(2);
            assertThat(placement.leafAddress(2)).isEqualTo("10.0.0.202");
            assertThat(fabric.remainingNamespaces()).hasSize(1 + 2 + 5);
            final String namespaces = String.join(" ", fabric.remainingNamespaces());
            int hostLinks = 0;
            int uplinks = 0;
            for (final String ns : fabric.remainingNamespaces())
            {
                final String qdiscs = Commands.output(List.of("ip", "netns", "exec", ns, "tc", "qdisc", "show"));
                hostLinks += (int)qdiscs.lines().filter(l -> l.contains("tbf") && l.contains("rate 40Mbit")).count();
                uplinks += (int)qdiscs.lines().filter(l -> l.contains("tbf") && l.contains("rate 30Mbit")).count();
            }
            assertThat(hostLinks).as("both ends of 5 host links in %s", namespaces).isEqualTo(10);
            assertThat(uplinks).as("both ends of 2 uplinks").isEqualTo(4);
            // Host 1 (leaf 1) reaches host 5 (leaf 2) and the spine's address.
            final List<String> h5 = placement.rankExec(4);
            final String probe = Commands.tryRun(List.of("sh", "-c", String.join(" ", h5) + " python3 -c \"import "
                + "socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
                + "s.bind(('10.0.0.5', 7777)); s.listen(); s.settimeout(20); c, _ = s.accept(); c.sendall(b'ok')\" & "
                + "sleep 0.5; " + String.join(" ", placement.rankExec(0)) + " python3 -c \"import socket; "
                + "print(socket.create_connection(('10.0.0.5', 7777), 10).recv(2))\"; wait"));
            assertThat(probe).as("host 1 to host 5 across the spine").isNull();
            assertThat(Commands.output(List.of("sh", "-c", String.join(" ", placement.switchExec())
                + " ip addr show br0"))).contains(HostNetwork.SWITCH_IPV4);
        }
        assertThat(kept.remainingNamespaces()).as("namespaces left after close").isEmpty();
    }

    @Test
    void shouldRefuseBadArgumentsBeforeCreatingAnything()
    {
        final List<String> before = HostNetwork.listNamespaces();
        final LinkRate rate = LinkRate.parse("100mbit");
        assertThatThrownBy(() -> LeafSpineFabric.create(4, 1, rate, rate, 1500, 20)).hasMessageContaining("not 1");
        assertThatThrownBy(() -> LeafSpineFabric.create(2, 3, rate, rate, 1500, 20))
            .hasMessageContaining("one at least under each leaf");
        assertThatThrownBy(() -> LeafSpineFabric.create(151, 2, rate, rate, 1500, 20)).hasMessageContaining("151");
        assertThatThrownBy(() -> LeafSpineFabric.create(4, 2, rate, rate, 10000, 20)).hasMessageContaining("MTU");
        assertThat(HostNetwork.listNamespaces()).isEqualTo(before);
    }
}
