package org.inagg.control.grid;

import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class GridFatTreeTest {

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void shouldOrderGridAboveAtpAboveOrEqualSwitchMlAboveNoIna(long seed) {
        Topology tree = Topologies.fatTree(8, 100, 1, FabricSpec.uniform100G().withProgrammableFraction(0.2)
            .withAggregationGbps(800).withSeed(seed));

        Map<RoutingScheme, Double> rates = GridPlanner.forFabrics().compare(tree);

        assertThat(rates.get(RoutingScheme.ROUTE_SELECTION)).isGreaterThan(rates.get(RoutingScheme.ATP));
        assertThat(rates.get(RoutingScheme.ATP)).isGreaterThanOrEqualTo(rates.get(RoutingScheme.SWITCHML) - 1e-9);
        assertThat(rates.get(RoutingScheme.SWITCHML)).isGreaterThan(rates.get(RoutingScheme.NO_INA));
    }
}
