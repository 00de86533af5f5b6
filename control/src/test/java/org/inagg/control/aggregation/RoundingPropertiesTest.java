package org.inagg.control.aggregation;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;

import static org.assertj.core.api.Assertions.assertThat;

class RoundingPropertiesTest {

    @Property(tries = 25)
    void shouldNeverPromiseMoreThanTheRelaxationNorOverloadAtTheRateItReports(
        @ForAll @IntRange(min = 4, max = 30) int workers,
        @ForAll @IntRange(min = 1, max = 3) int servers,
        @ForAll @DoubleRange(min = 0, max = 1) double programmable,
        @ForAll @DoubleRange(min = 0, max = 0.7) double background,
        @ForAll @IntRange(min = 1, max = 1000) int seed) {
        Topology fabric = Topologies.spineLeaf(3, 4, 4, workers, servers, new FabricSpec(40, 25, programmable,
            60, 1000, 50, background, seed));
        AggregationProblem problem = AggregationProblem.build(fabric, RoutingScheme.ROUTE_SELECTION,
            CandidateSettings.fabrics());

        FractionalRouting fractional = AggregationLp.solveWithBestSplit(problem);
        RandomizedRounding.RoundingResult rounded = RandomizedRounding.round(fractional, 4, seed);

        double lp = fractional.rateGbps();
        assertThat(rounded.rateGbps()).isLessThanOrEqualTo(lp * (1 + 1e-7) + 1e-9);
        assertThat(rounded.best().violationsAt(rounded.rateGbps())).isEmpty();
        if (rounded.violations().isEmpty()) {
            assertThat(rounded.rateGbps()).as("no violation reported, so the LP rate is met")
                .isGreaterThanOrEqualTo(lp * (1 - 1e-8) - 1e-9);
        } else {
            assertThat(rounded.rateGbps()).as("a violation reported, so the LP rate is missed")
                .isLessThan(lp);
        }
    }

    @Property(tries = 15)
    void shouldStayBelowTheExactUnsplittableOptimum(@ForAll @IntRange(min = 2, max = 6) int workers,
                                                    @ForAll @IntRange(min = 1, max = 500) int seed) {
        Topology fabric = Topologies.spineLeaf(2, 3, 3, workers, 1, new FabricSpec(10, 10, 0.6, 15, 100, 20,
            0.5, seed));
        AggregationProblem problem = AggregationProblem.build(fabric, RoutingScheme.ROUTE_SELECTION,
            CandidateSettings.smallNetworks());

        double rounded = RandomizedRounding.round(AggregationLp.solve(problem), 8, seed).rateGbps();
        double optimum = IntegralOptimum.rateGbps(problem, new double[] {1});

        assertThat(rounded).isLessThanOrEqualTo(optimum * (1 + 1e-6));
        assertThat(optimum).isLessThanOrEqualTo(AggregationLp.solve(problem).rateGbps() * (1 + 1e-6));
    }

    @Property(tries = 20)
    void shouldNeverRateAtpBelowSwitchMl(@ForAll @IntRange(min = 4, max = 40) int workers,
                                           @ForAll @IntRange(min = 1, max = 1000) int seed) {
        Topology tree = Topologies.fatTree(4, Math.min(workers, 15), 1, FabricSpec.uniform100G()
            .withProgrammableFraction(0.4).withAggregationGbps(300).withSeed(seed));
        CandidateSettings settings = CandidateSettings.fabrics();

        double atp = AggregationLp.solve(AggregationProblem.build(tree, RoutingScheme.ATP, settings)).rateGbps();
        double switchMl = AggregationLp.solve(AggregationProblem.build(tree, RoutingScheme.SWITCHML, settings))
            .rateGbps();

        assertThat(atp).as("ATP is SwitchML plus a fallback").isGreaterThanOrEqualTo(switchMl * (1 - 1e-7));
    }
}
