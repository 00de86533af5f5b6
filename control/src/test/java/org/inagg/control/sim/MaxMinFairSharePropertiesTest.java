package org.inagg.control.sim;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class MaxMinFairSharePropertiesTest {

    @Property(tries = 200)
    void shouldBeFeasibleAndGiveEveryUnitASaturatedBottleneckWhereItIsAmongTheFastest(
        @ForAll @IntRange(min = 1, max = 8) int resources,
        @ForAll @IntRange(min = 1, max = 12) int unitCount,
        @ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        double[] capacity = new double[resources];
        for (int r = 0; r < resources; r++) {
            capacity[r] = 1 + random.nextInt(100);
        }
        List<FlowUnit> units = new ArrayList<>();
        for (int u = 0; u < unitCount; u++) {
            int uses = 1 + random.nextInt(resources);
            int[] used = random.ints(0, resources).distinct().limit(uses).toArray();
            double[] coefficients = new double[used.length];
            for (int k = 0; k < used.length; k++) {
                coefficients[k] = 1 + random.nextInt(3);
            }
            units.add(new FlowUnit("u" + u, used, coefficients, 1));
        }

        double[] rate = MaxMinFairShare.allocate(capacity, units);

        double[] load = new double[resources];
        for (int u = 0; u < unitCount; u++) {
            FlowUnit unit = units.get(u);
            for (int k = 0; k < unit.resources().length; k++) {
                load[unit.resources()[k]] += unit.coefficients()[k] * rate[u];
            }
        }
        for (int r = 0; r < resources; r++) {
            assertThat(load[r]).isLessThanOrEqualTo(capacity[r] * (1 + 1e-9));
        }
        for (int u = 0; u < unitCount; u++) {
            FlowUnit unit = units.get(u);
            boolean hasBottleneck = false;
            for (int r : unit.resources()) {
                if (load[r] >= capacity[r] * (1 - 1e-9)) {
                    double fastest = 0;
                    for (int v = 0; v < unitCount; v++) {
                        for (int s : units.get(v).resources()) {
                            if (s == r) {
                                fastest = Math.max(fastest, rate[v]);
                            }
                        }
                    }
                    hasBottleneck |= rate[u] >= fastest * (1 - 1e-9);
                }
            }
            assertThat(hasBottleneck).as("unit %d has a bottleneck", u).isTrue();
        }
    }
}
