package org.inagg.control.sim;

import org.inagg.control.grid.GridPlanner;
import org.inagg.control.topology.Topologies;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class FlowSimulatorTest {

    @Test
    void shouldSpeedUpTheSurvivorWhenAFlowFinishes() {
        // Two flows share a 10 Gb/s link: 5 each until the 10 Gb one is done at 2 s, then 10 for the rest.
        List<FlowUnit> flows = List.of(new FlowUnit("short", new int[] {0}, new double[] {1}, 10),
            new FlowUnit("long", new int[] {0}, new double[] {1}, 30));

        double[] finish = FlowSimulator.completionTimes(new double[] {10}, flows);

        assertThat(finish[0]).isCloseTo(2, within(1e-9));
        assertThat(finish[1]).isCloseTo(4, within(1e-9));
    }

    @Test
    void shouldPushTheGridExamplePlanAtThePlannedRate() {
        var plan = GridPlanner.forSmallNetworks().plan(Topologies.gridExample());

        assertThat(PlanSimulation.pushSeconds(plan.best(), 3.0)).isCloseTo(3.0 / plan.rateGbps(), within(1e-9));
    }
}
