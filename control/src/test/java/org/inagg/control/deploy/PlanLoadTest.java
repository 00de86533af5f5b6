package org.inagg.control.deploy;

import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.grid.GridPlanner;
import org.inagg.control.plan.InaPlan;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * A plan's streams counted from its file: in the gradients' direction the count gives the planner's own rate for
 * every scheme's one-path-per-worker plan on GRID's example; in the results' direction (the PS answering each worker
 * back along its path) the links into S1 carry one result per worker behind them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlanLoadTest {

    private static final Topology GRID = Topologies.gridExample();

    private static InaPlan plan(RoutingScheme scheme) {
        return PlanJson.plan(scheme.name(), GridPlanner.forSmallNetworks().plan(GRID, scheme), List.of());
    }

    @Test
    void shouldGiveThePlannersRateForEverySchemeInTheGradientsDirection() {
        for (RoutingScheme scheme : RoutingScheme.values()) {
            InaPlan plan = plan(scheme);
            assertThat(PlanLoad.of(GRID, plan).upGbps()).as(scheme.name()).isCloseTo(plan.rateGbps(), within(1e-9));
        }
        assertThat(PlanLoad.of(GRID, plan(RoutingScheme.ROUTE_SELECTION)).upGbps()).isCloseTo(3.0, within(1e-9));
        assertThat(PlanLoad.of(GRID, plan(RoutingScheme.NO_INA)).upGbps()).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void shouldCountOneResultPerWorkerBehindALinkWhenThePsAnswersEveryWorker() {
        // GRID: W2-W4 behind S3->S1, W1 and W5-W6 behind S3->S2; both links 3 Gb/s.
        PlanLoad grid = PlanLoad.of(GRID, plan(RoutingScheme.ROUTE_SELECTION), false);
        assertThat(grid.downGbps()).isCloseTo(1.0, within(1e-9));
        assertThat(grid.rateGbps()).isCloseTo(1.0, within(1e-9));
        // ATP's nearest switch: all of W1-W4 behind S3->S1.
        PlanLoad atp = PlanLoad.of(GRID, plan(RoutingScheme.ATP), false);
        assertThat(atp.downGbps()).isCloseTo(0.75, within(1e-9));
        assertThat(atp.downLimit()).isEqualTo("link S3->S1");
    }

    @Test
    void shouldCountOneResultPerSummingSwitchOnItsUpstreamPathWithResultsDownTheTree() {
        // GRID: one result each from the PS to S1, S2 and S3, then one per worker on its own path: no link direction
        // carries more than one result, so the results' direction allows the links' 3 Gb/s and the plan runs at its
        // planned 3 Gb/s both ways.
        PlanLoad grid = PlanLoad.of(GRID, plan(RoutingScheme.ROUTE_SELECTION));
        assertThat(grid.downGbps()).isCloseTo(3.0, within(1e-9));
        assertThat(grid.rateGbps()).isCloseTo(3.0, within(1e-9));
        PlanLoad atp = PlanLoad.of(GRID, plan(RoutingScheme.ATP));
        assertThat(atp.downGbps()).isCloseTo(3.0, within(1e-9));
        assertThat(atp.rateGbps()).isCloseTo(atp.upGbps(), within(1e-9));
        // Without INA the PS still answers every worker: W1-W4's four results share S3->S1.
        PlanLoad none = PlanLoad.of(GRID, plan(RoutingScheme.NO_INA));
        assertThat(none.downGbps()).isEqualTo(PlanLoad.of(GRID, plan(RoutingScheme.NO_INA), false).downGbps());
    }

    @Test
    void shouldNameANodeTheTopologyLacks() {
        InaPlan plan = plan(RoutingScheme.NO_INA);
        Topology other = Topologies.inartExample();
        assertThatThrownBy(() -> PlanLoad.of(other, plan)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("lacks");
    }
}
