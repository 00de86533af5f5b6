package org.inagg.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.inagg.control.topology.TopologyBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The routed fabric's addresses and routes, on GRID's example (S1, S2, S3 = nodes 0-2, W1-W8 = 3-10, PS = 11; links
 * S1-S3, S1-S2, S2-S3, then W1-W8 to their switches, PS-S3): fewest hops through switches, pinned paths checked.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FabricRoutesTest
{
    private static final Topology GRID = Topologies.gridExample();
    private final FabricRoutes routes = new FabricRoutes(GRID);

    @Test
    void shouldGiveEveryNodeAnAddressAndEveryLinkASlash31()
    {
        assertThat(FabricRoutes.nodeAddress(0)).isEqualTo("10.1.0.1");
        assertThat(FabricRoutes.nodeAddress(11)).isEqualTo("10.1.0.12");
        assertThat(FabricRoutes.nodeAddress(300)).isEqualTo("10.1.1.45");
        assertThat(FabricRoutes.linkAddress(6)).isEqualTo("10.3.0.6");
        assertThat(FabricRoutes.linkAddress(513)).isEqualTo("10.3.2.1");
        assertThat(FabricRoutes.aggregatorAddress(2)).isEqualTo("10.2.0.3");
    }

    @Test
    void shouldRouteOverFewestHopsThroughSwitchesOnly()
    {
        // W1 (link 3, its end 10.3.0.6) reaches the PS through S1 (10.3.0.7).
        assertThat(routes.routesOf(3)).contains("route add 10.1.0.12/32 via 10.3.0.7 dev l3 src 10.1.0.4");
        // S1 reaches the PS over S1-S3 (link 0), not through S2; and its aggregation unit over its own port.
        assertThat(routes.routesOf(0)).contains("route add 10.1.0.12/32 via 10.3.0.1 dev l0 src 10.1.0.1")
            .contains("route add 10.2.0.1/32 via 10.4.0.0 dev agg src 10.1.0.1")
            .contains("route add 10.2.0.2/32 via 10.3.0.3 dev l1 src 10.1.0.1");
        // Hosts are no transit: W1 reaches W2 only through S1 (two hops).
        assertThat(routes.hopsTo(11)[3]).isEqualTo(3);
        assertThat(routes.hopsTo(11)[1]).isEqualTo(2);
    }

    @Test
    void shouldPinAPathHopByHopAndNameWhatIsWrongWithABadOne()
    {
        assertThat(routes.pin(List.of("W1", "S1", "S2", "S3", "PS")).values()).containsExactly(
            "via 10.3.0.7 dev l3", "via 10.3.0.3 dev l1", "via 10.3.0.5 dev l2", "via 10.3.0.22 dev l11");
        assertThatThrownBy(() -> routes.pin(List.of("W1", "S3"))).hasMessageContaining("no link joins W1 and S3");
        assertThatThrownBy(() -> routes.pin(List.of("W1", "S9"))).hasMessageContaining("unknown node 'S9'");
        assertThatThrownBy(() -> routes.pin(List.of("S1", "S2", "S1", "S3"))).hasMessageContaining("twice");
        assertThatThrownBy(() -> routes.pin(List.of("S1", "W1", "S1"))).hasMessageContaining("not a switch");
        assertThatThrownBy(() -> routes.pin(List.of("W1"))).hasMessageContaining("two nodes");
    }

    @Test
    void shouldNameAPairThatCannotReachEachOther()
    {
        final Topology split = new TopologyBuilder("split").programmableSwitch("S1", 1, 10).plainSwitch("S2")
            .worker("W1").worker("W2").parameterServer("PS", 1).link("W1", "S1", 1).link("W2", "S2", 1)
            .link("PS", "S1", 1).build();
        assertThatThrownBy(() -> new FabricRoutes(split).requireConnected()).hasMessageContaining("W1 cannot reach W2");
    }
}
