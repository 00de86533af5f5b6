package org.inagg.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.inagg.control.topology.TopologyBuilder;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The routed fabric of GRID's example (3 switches in a triangle, 8 workers, a PS): both ends of every link limited to
 * the file's rate times the scale, each switch's aggregation unit behind a port of its capacity, a worker reaching the
 * PS and a flow pinned to the long way round really taking it; bad input refused before anything exists; nothing
 * left after close.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TopologyFabricTest
{
    @BeforeEach
    void requireNamespaces()
    {
        EmulatedClusterTest.requireCluster();
    }

    @Test
    void shouldBuildGridsExampleWithEveryLinkLimitedAndPinFlowsToTheirPaths()
    {
        final TopologyFabric kept;
        try (TopologyFabric fabric = TopologyFabric.create(Topologies.gridExample(), LinkRate.parse("10mbit"), 1500,
            20, TopologyFabric.Shaping.BOTH, null))
        {
            kept = fabric;
            assertThat(fabric.remainingNamespaces()).hasSize(12 + 3);
            int hostAndTriangle = 0;
            int fast = 0;
            for (final String ns : fabric.remainingNamespaces())
            {
                final String qdiscs = Commands.output(List.of("ip", "netns", "exec", ns, "tc", "qdisc", "show"));
                hostAndTriangle += (int)qdiscs.lines().filter(l -> l.contains("tbf") && l.contains("rate 30Mbit"))
                    .count();
                fast += (int)qdiscs.lines().filter(l -> l.contains("tbf") && l.contains("rate 90Mbit")).count();
            }
            assertThat(hostAndTriangle).as("both ends of 8 worker links and the 3 switch links").isEqualTo(22);
            assertThat(fast).as("both ends of the PS link and of 3 aggregation ports").isEqualTo(8);
            assertThat(fabric.address("PS")).isEqualTo("10.1.0.12");
            assertThat(fabric.aggregatorAddress("S2")).isEqualTo("10.2.0.2");

            final String w1 = fabric.address("W1");
            assertThat(udp(fabric.exec("PS"), fabric.address("PS"), fabric.exec("W1"), w1)).as("W1 to the PS").isNull();
            assertThat(udp(fabric.aggregatorExec("S3"), fabric.aggregatorAddress("S3"), fabric.exec("W5"),
                fabric.address("W5"))).as("W5 to S3's aggregation unit").isNull();
            // W1 -> PS over S1, S2, S3 instead of S1-S3: S2 forwards it.
            final long before = forwarded(fabric, "S2");
            fabric.route(w1, fabric.address("PS"), List.of("W1", "S1", "S2", "S3", "PS"));
            assertThat(udp(fabric.exec("PS"), fabric.address("PS"), fabric.exec("W1"), w1)).isNull();
            assertThat(forwarded(fabric, "S2") - before).as("packets through S2").isGreaterThanOrEqualTo(1);
            assertThatThrownBy(() -> fabric.route(w1, fabric.address("PS"), List.of("W1", "S3")))
                .hasMessageContaining("no link joins W1 and S3");
            assertThatThrownBy(() -> fabric.exec("W9")).hasMessageContaining("unknown node 'W9'");
            assertThatThrownBy(() -> fabric.aggregatorExec("W1")).hasMessageContaining("not a programmable switch");
        }
        assertThat(kept.remainingNamespaces()).as("namespaces left after close").isEmpty();
    }

    @Test
    void shouldRefuseBadInputBeforeCreatingAnything()
    {
        final List<String> before = HostNetwork.listNamespaces();
        final Topology grid = Topologies.gridExample();
        final Topology slow = new TopologyBuilder("slow").programmableSwitch("S1", 1, 10).worker("W1").worker("W2")
            .parameterServer("PS", 1).link("W1", "S1", 0.001).link("W2", "S1", 1).link("PS", "S1", 1).build();
        assertThatThrownBy(() -> TopologyFabric.create(slow, LinkRate.parse("10mbit"), 1500, 20,
            TopologyFabric.Shaping.BOTH, null)).hasMessageContaining("link W1->S1").hasMessageContaining("tc");
        assertThatThrownBy(() -> TopologyFabric.create(grid, LinkRate.parse("20gbit"), 1500, 20,
            TopologyFabric.Shaping.BOTH, null)).hasMessageContaining("outside");
        assertThatThrownBy(() -> TopologyFabric.create(grid, LinkRate.parse("10mbit"), 1500, 20,
            TopologyFabric.Shaping.TOWARD, "PS9")).hasMessageContaining("unknown node 'PS9'");
        assertThatThrownBy(() -> TopologyFabric.create(grid, LinkRate.parse("10mbit"), 100, 20,
            TopologyFabric.Shaping.BOTH, null)).hasMessageContaining("MTU");
        final Topology split = new TopologyBuilder("split").plainSwitch("S1").plainSwitch("S2").worker("W1")
            .worker("W2").parameterServer("PS", 1).link("W1", "S1", 1).link("W2", "S2", 1).link("PS", "S1", 1).build();
        assertThatThrownBy(() -> TopologyFabric.create(split, LinkRate.parse("10mbit"), 1500, 20,
            TopologyFabric.Shaping.BOTH, null)).hasMessageContaining("W1 cannot reach W2");
        assertThat(HostNetwork.listNamespaces()).isEqualTo(before);
    }

    /** A UDP datagram from the sender's address to a listener, and its answer back; null when it went through. */
    private static String udp(final List<String> listener, final String at, final List<String> sender,
        final String from)
    {
        return Commands.tryRun(List.of("sh", "-c", String.join(" ", listener) + " python3 -c \"import socket; "
            + "s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('" + at + "', 7777)); s.settimeout(20); "
            + "d, a = s.recvfrom(16); s.sendto(d, a)\" & sleep 0.5; " + String.join(" ", sender) + " python3 -c "
            + "\"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('" + from + "', 0)); "
            + "s.settimeout(10); s.sendto(b'ok', ('" + at + "', 7777)); assert s.recv(16) == b'ok'\" && wait"));
    }

    /** Packets a switch has forwarded (its IPv4 ForwDatagrams). */
    private static long forwarded(final TopologyFabric fabric, final String sw)
    {
        final List<String> lines = Commands.output(List.of("sh", "-c", String.join(" ", fabric.exec(sw))
            + " cat /proc/net/snmp")).lines().filter(l -> l.startsWith("Ip:")).toList();
        final List<String> names = List.of(lines.get(0).split("\\s+"));
        return Long.parseLong(lines.get(1).split("\\s+")[names.indexOf("ForwDatagrams")]);
    }
}
