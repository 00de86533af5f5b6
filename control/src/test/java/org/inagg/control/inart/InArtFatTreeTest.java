package org.inagg.control.inart;

import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class InArtFatTreeTest {

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void shouldCutCommunicationTimeByAtLeastThirtyPercentAgainstAtp(long seed) {
        Topology tree = Topologies.fatTree(6, 50, 4, FabricSpec.uniform100G().withProgrammableFraction(0.5)
            .withBackgroundLoadMax(0.6).withAggregationGbps(800).withSeed(seed));
        InArtPlanner planner = InArtPlanner.forFabrics();
        double modelGigabits = 8;

        double inart = planner.plan(tree, SplitMethod.EXACT_LP).communicationSeconds(modelGigabits);
        double atpOnOnePs = modelGigabits
            / planner.baseline(tree, RoutingScheme.ATP, new int[] {tree.parameterServers()[0]}).rateGbps();
        double atpOnAllPs = modelGigabits
            / planner.baseline(tree, RoutingScheme.ATP, tree.parameterServers()).rateGbps();

        assertThat(inart).isLessThanOrEqualTo(0.7 * atpOnOnePs);
        assertThat(inart).isLessThanOrEqualTo(0.7 * atpOnAllPs);
    }
}
