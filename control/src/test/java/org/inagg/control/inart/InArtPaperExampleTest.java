package org.inagg.control.inart;

import org.inagg.control.aggregation.AggregationLp;
import org.inagg.control.aggregation.AggregationProblem;
import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.IntegralOptimum;
import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class InArtPaperExampleTest {

    private final Topology example = Topologies.inartExample();
    private final InArtPlanner planner = InArtPlanner.forSmallNetworks();

    @Test
    void shouldReachTwoAndAHalfWithTheSplitFixedAtSixtyForty() {
        InArtResult result = planner.planWithSplit(example, new double[] {0.6, 0.4});

        assertThat(result.rateGbps()).isCloseTo(2.5, within(1e-6));
    }

    @Test
    void shouldFindThatTwoAndAHalfIsTheUnsplittableOptimumForThatSplit() {
        AggregationProblem problem = AggregationProblem.build(example, RoutingScheme.ROUTE_SELECTION,
            CandidateSettings.smallNetworks());

        assertThat(IntegralOptimum.rateGbps(problem, new double[] {0.6, 0.4})).isCloseTo(2.5, within(1e-6));
    }

    @Test
    void shouldGiveFourThirdsWithLoadBalancedRoutingAndNoAggregation() {
        assertThat(planner.baseline(example, RoutingScheme.NO_INA, example.parameterServers()).rateGbps())
            .isCloseTo(4.0 / 3, within(1e-6));
    }

    @Test
    void shouldGiveTwoWithAtpOnTheTraditionalSinglePsArchitecture() {
        int[] firstPs = {example.parameterServers()[0]};

        assertThat(planner.baseline(example, RoutingScheme.ATP, firstPs).rateGbps()).isCloseTo(2.0, within(1e-6));
    }

    @Test
    void shouldFindABetterSplitThanSixtyFortyInPhaseOne() {
        InArtResult best = planner.plan(example, SplitMethod.EXACT_LP);

        assertThat(best.split()).containsExactly(new double[] {0.5, 0.5}, within(1e-6));
        assertThat(best.rateGbps()).isCloseTo(8.0 / 3, within(1e-6)).isGreaterThan(2.5);
        assertThat(best.routing().fractional().rateGbps()).isCloseTo(3.0, within(1e-6));
    }

    @Test
    void shouldAgreeWithAnExhaustiveSearchOverTheSplit() {
        AggregationProblem problem = AggregationProblem.build(example, RoutingScheme.ROUTE_SELECTION,
            CandidateSettings.smallNetworks());
        double searched = 0;
        for (int step = 0; step <= 100; step++) {
            double share = step / 100.0;
            searched = Math.max(searched,
                AggregationLp.solveWithSplit(problem, new double[] {share, 1 - share}).rateGbps());
        }

        assertThat(AggregationLp.solveWithBestSplit(problem).rateGbps()).isGreaterThanOrEqualTo(searched - 1e-9);
    }

    @Test
    void shouldGiveASplitThatSumsToOneWithTheLagrangianMethod() {
        double[] split = planner.split(example, SplitMethod.LAGRANGIAN);

        assertThat(split[0] + split[1]).isCloseTo(1, within(1e-9));
        assertThat(split).containsExactly(new double[] {0.5, 0.5}, within(1e-6));
    }
}
