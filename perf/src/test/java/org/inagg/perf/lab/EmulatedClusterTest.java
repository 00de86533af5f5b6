package org.inagg.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The emulated cluster's wiring: a token bucket of the right rate on both ends of every link, hosts that reach each
 * other and the switch's address through the bridge, bad arguments refused before anything is created, and nothing
 * left after close. Needs root, tc and ethtool; required in CI ({@code -Dinagg.cluster.tests.require=true}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public class EmulatedClusterTest
{
    @BeforeEach
    void requireNamespaces()
    {
        requireCluster();
    }

    /** Skips (fails where required) without root, tc or ethtool. */
    public static void requireCluster()
    {
        final String why = unavailableReason();
        if (why != null)
        {
            if (Boolean.getBoolean("inagg.cluster.tests.require"))
            {
                Assertions.fail("cluster tests are required here (-Dinagg.cluster.tests.require=true) but " + why);
            }
            Assumptions.abort("skipped: " + why);
        }
    }

    static String unavailableReason()
    {
        if (!"root".equals(System.getProperty("user.name")))
        {
            return "network namespaces need root (running as " + System.getProperty("user.name") + ")";
        }
        if (Commands.tryRun(List.of("tc", "-V")) != null)
        {
            return "tc is missing (Debian package iproute2)";
        }
        if (Commands.tryRun(List.of("ethtool", "--version")) != null)
        {
            return "ethtool is missing (Debian package ethtool)";
        }
        return null;
    }

    @Test
    void shouldLimitBothEndsOfEveryLinkAndConnectTheHosts()
    {
        final HostNetwork network;
        try (EmulatedCluster cluster = EmulatedCluster.create(3, LinkRate.parse("50mbit"),
            Map.of(2, LinkRate.parse("20mbit")), 1500, 20))
        {
            network = cluster.network();
            assertThat(cluster.describe()).contains("3 hosts").contains("per-host");
            assertThat(cluster.slowestRate()).isEqualTo(LinkRate.parse("20mbit"));
            final String qdiscs = cluster.qdiscs();
            assertThat(qdiscs.lines().filter(l -> l.contains("tbf"))).hasSize(6);
            assertThat(qdiscs.lines().filter(l -> l.contains("rate 50Mbit"))).hasSize(4);
            assertThat(qdiscs.lines().filter(l -> l.contains("rate 20Mbit"))).hasSize(2);
            // Host 1 reaches host 3 and the switch's address through the bridge (a TCP connection).
            final String probe = Commands.tryRun(List.of("ip", "netns", "exec", network.host(3).namespace(), "sh",
                "-c", "exec python3 -c \"import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, "
                    + "socket.SO_REUSEADDR, 1); s.bind(('10.0.0.3', 7777)); s.listen(); s.settimeout(20); "
                    + "c, _ = s.accept(); c.sendall(b'ok')\" & sleep 0.5; ip netns exec "
                    + network.host(1).namespace() + " python3 -c \"import socket; "
                    + "print(socket.create_connection(('10.0.0.3', 7777), 10).recv(2))\"; wait"));
            assertThat(probe).as("host 1 to host 3 over the bridge").isNull();
            assertThat(Commands.tryRun(List.of("ip", "netns", "exec", network.switchNamespace(), "ip", "addr",
                "show", "br0"))).isNull();
            assertThat(Commands.output(List.of("ip", "netns", "exec", network.switchNamespace(), "ip", "addr", "show",
                "br0"))).contains(HostNetwork.SWITCH_IPV4).contains("mtu 1500");
            assertThat(cluster.placement().rankAddress(2)).isEqualTo("10.0.0.3");
            assertThat(cluster.placement().rankExec(0)).containsExactly("ip", "netns", "exec",
                network.host(1).namespace());
            assertThatThrownBy(() -> cluster.placement().rankAddress(3)).hasMessageContaining("rank 3");
        }
        assertThat(network.remainingNamespaces()).as("namespaces left after close").isEmpty();
    }

    @Test
    void shouldRefuseBadArgumentsBeforeCreatingAnything()
    {
        final List<String> before = HostNetwork.listNamespaces();
        final LinkRate rate = LinkRate.parse("100mbit");
        assertThatThrownBy(() -> EmulatedCluster.create(3, rate, Map.of(4, rate), 1500, 20))
            .hasMessageContaining("unknown host 4").hasMessageContaining("1..3");
        assertThatThrownBy(() -> EmulatedCluster.create(1, rate, Map.of(), 1500, 20)).hasMessageContaining("2..");
        assertThatThrownBy(() -> EmulatedCluster.create(HostNetwork.MAX_HOSTS + 1, rate, Map.of(), 1500, 20))
            .hasMessageContaining("not " + (HostNetwork.MAX_HOSTS + 1));
        assertThatThrownBy(() -> EmulatedCluster.create(3, rate, Map.of(), 100, 20)).hasMessageContaining("MTU 100");
        assertThatThrownBy(() -> EmulatedCluster.create(3, rate, Map.of(), 1500, 0)).hasMessageContaining("0 ms");
        assertThat(HostNetwork.listNamespaces()).isEqualTo(before);
    }
}
