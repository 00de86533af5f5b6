package org.inagg.control.sim;

import java.util.List;

/**
 * Max-min fair rates by progressive filling: raise every unfrozen unit's rate together until some resource is
 * full, freeze the units on it, repeat. The result is the unique allocation in which no unit can go faster without
 * slowing one that is no faster than it.
 */
public final class MaxMinFairShare {

    private static final double EPSILON = 1e-12;

    private MaxMinFairShare() {
    }

    /**
     * @param capacity  capacity of each resource
     * @param units     the units; a unit that uses no resource gets an infinite rate
     * @param active    which units take part (others get rate 0)
     */
    public static double[] allocate(double[] capacity, List<FlowUnit> units, boolean[] active) {
        int n = units.size();
        double[] rate = new double[n];
        double[] remaining = capacity.clone();
        boolean[] frozen = new boolean[n];
        double[] demand = new double[capacity.length];
        int unfrozen = 0;
        for (int u = 0; u < n; u++) {
            if (active[u]) {
                if (units.get(u).resources().length == 0) {
                    rate[u] = Double.POSITIVE_INFINITY;
                    frozen[u] = true;
                } else {
                    unfrozen++;
                }
            } else {
                frozen[u] = true;
            }
        }
        while (unfrozen > 0) {
            java.util.Arrays.fill(demand, 0);
            for (int u = 0; u < n; u++) {
                if (!frozen[u]) {
                    FlowUnit unit = units.get(u);
                    for (int k = 0; k < unit.resources().length; k++) {
                        demand[unit.resources()[k]] += unit.coefficients()[k];
                    }
                }
            }
            double step = Double.POSITIVE_INFINITY;
            for (int r = 0; r < capacity.length; r++) {
                if (demand[r] > 0) {
                    step = Math.min(step, Math.max(0, remaining[r]) / demand[r]);
                }
            }
            for (int r = 0; r < capacity.length; r++) {
                if (demand[r] > 0) {
                    remaining[r] -= step * demand[r];
                }
            }
            for (int u = 0; u < n; u++) {
                if (!frozen[u]) {
                    rate[u] += step;
                }
            }
            for (int u = 0; u < n; u++) {
                if (frozen[u]) {
                    continue;
                }
                FlowUnit unit = units.get(u);
                for (int k = 0; k < unit.resources().length; k++) {
                    int r = unit.resources()[k];
                    if (remaining[r] <= EPSILON * Math.max(1, capacity[r])) {
                        frozen[u] = true;
                        unfrozen--;
                        break;
                    }
                }
            }
        }
        return rate;
    }

    public static double[] allocate(double[] capacity, List<FlowUnit> units) {
        boolean[] all = new boolean[units.size()];
        java.util.Arrays.fill(all, true);
        return allocate(capacity, units, all);
    }
}
