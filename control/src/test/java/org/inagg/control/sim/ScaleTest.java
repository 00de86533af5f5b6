package org.inagg.control.sim;

import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.grid.GridPlanner;
import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ScaleTest {

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldPlanAndSimulateTenThousandWorkersWellUnderAMinute() {
        Topology fabric = Topologies.spineLeaf(16, 251, 40, 10_000, 1, FabricSpec.uniform100G()
            .withProgrammableFraction(0.2).withAggregationGbps(1600));

        RandomizedRounding.RoundingResult plan = new GridPlanner(new CandidateSettings(0, 2, 7), 8, 1).plan(fabric);
        double seconds = PlanSimulation.pushSeconds(plan.best(), 8);

        assertThat(plan.best().workerCount()).isEqualTo(10_000);
        assertThat(plan.rateGbps()).isPositive().isLessThanOrEqualTo(plan.fractional().rateGbps() * (1 + 1e-7));
        assertThat(seconds).isCloseTo(8 / plan.rateGbps(), org.assertj.core.api.Assertions.within(1e-6 * seconds));
    }
}
