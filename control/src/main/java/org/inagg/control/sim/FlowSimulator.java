package org.inagg.control.sim;

import java.util.List;

/**
 * Advances max-min fair flows from one completion to the next until all have moved their volume; returns each
 * unit's completion time. Units finishing within a relative 1e-9 of each other finish together, so a thousand
 * equal flows cost one step.
 */
public final class FlowSimulator {

    private FlowSimulator() {
    }

    /** Completion time of every unit, all starting at time 0, in the units' volume unit over capacity unit. */
    public static double[] completionTimes(double[] capacity, List<FlowUnit> units) {
        int n = units.size();
        double[] left = new double[n];
        boolean[] active = new boolean[n];
        double[] finish = new double[n];
        int running = 0;
        for (int u = 0; u < n; u++) {
            left[u] = units.get(u).volume();
            active[u] = left[u] > 0;
            running += active[u] ? 1 : 0;
        }
        double now = 0;
        while (running > 0) {
            double[] rate = MaxMinFairShare.allocate(capacity, units, active);
            double step = Double.POSITIVE_INFINITY;
            for (int u = 0; u < n; u++) {
                if (active[u]) {
                    step = Math.min(step, rate[u] > 0 ? left[u] / rate[u] : Double.POSITIVE_INFINITY);
                }
            }
            if (Double.isInfinite(step)) {
                throw new IllegalStateException("some unit can never finish: a resource has no capacity");
            }
            now += step;
            for (int u = 0; u < n; u++) {
                if (!active[u]) {
                    continue;
                }
                left[u] -= rate[u] * step;
                if (left[u] <= 1e-9 * units.get(u).volume() || Double.isInfinite(rate[u])) {
                    active[u] = false;
                    finish[u] = now;
                    running--;
                }
            }
        }
        return finish;
    }

    /** The time the last unit finishes. */
    public static double makespan(double[] capacity, List<FlowUnit> units) {
        double last = 0;
        for (double time : completionTimes(capacity, units)) {
            last = Math.max(last, time);
        }
        return last;
    }
}
