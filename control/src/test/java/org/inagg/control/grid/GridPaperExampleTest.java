package org.inagg.control.grid;

import org.inagg.control.aggregation.AggregationProblem;
import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.IntegralOptimum;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.aggregation.RouteOption;
import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class GridPaperExampleTest {

    private final Topology example = Topologies.gridExample();
    private final GridPlanner planner = GridPlanner.forSmallNetworks();

    @Test
    void shouldGiveOneGbpsWithoutInNetworkAggregation() {
        assertThat(planner.baseline(example, RoutingScheme.NO_INA).rateGbps()).isCloseTo(1.0, within(1e-6));
    }

    @Test
    void shouldGiveTheNearestSwitchRateOfAtp() {
        // The paper: 9/4 = 2.25 aggregated at S1 plus 0.75/4 to the PS = 2.4375, printed as 2.43.
        assertThat(planner.baseline(example, RoutingScheme.ATP).rateGbps()).isCloseTo(2.4375, within(1e-6));
    }

    @Test
    void shouldReachTheOptimumOfThreeGbpsWithGrid() {
        RandomizedRounding.RoundingResult grid = planner.plan(example);

        assertThat(grid.fractional().rateGbps()).isCloseTo(3.0, within(1e-6));
        assertThat(grid.rateGbps()).isCloseTo(3.0, within(1e-6));
        assertThat(grid.violations()).isEmpty();
    }

    @Test
    void shouldMatchTheExactUnsplittableOptimum() {
        AggregationProblem problem = AggregationProblem.build(example, RoutingScheme.ROUTE_SELECTION,
            CandidateSettings.smallNetworks());

        assertThat(IntegralOptimum.rateGbps(problem, new double[] {1})).isCloseTo(3.0, within(1e-6));
    }

    @Test
    void shouldSendOneOfTheFourS1WorkersToS2AndAggregateW7AndW8AtS3() {
        RandomizedRounding.RoundingResult grid = planner.plan(example);
        AggregationProblem problem = grid.best().problem();
        Map<String, Integer> workersPerSwitch = new HashMap<>();
        for (int i = 0; i < grid.best().workerCount(); i++) {
            RouteOption option = problem.options().get(grid.best().choice(i, 0));
            assertThat(option.isDirect()).as("every worker is aggregated in the network").isFalse();
            String at = example.node(problem.groups().get(option.groupId()).aggregationSwitch()).id();
            workersPerSwitch.merge(at, 1, Integer::sum);
        }

        assertThat(workersPerSwitch).containsEntry("S1", 3).containsEntry("S2", 3).containsEntry("S3", 2);
    }

    @Test
    void shouldBeReproducibleForTheSameSeed() {
        assertThat(planner.plan(example).drawRates()).containsExactly(planner.plan(example).drawRates());
    }
}
