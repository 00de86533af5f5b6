package org.inagg.control.aggregation;

import org.inagg.control.topology.Topology;

import java.util.ArrayList;
import java.util.List;

/**
 * One route per worker and PS (no splitting), and what it achieves: every worker sends at the same rate (the PS
 * waits for the slowest anyway), so the rate is the largest at which no link, switch or PS ingress is overloaded,
 * {@code min over resources of capacity / (coefficient of the rate on it)}.
 */
public final class IntegralRouting {

    private static final double TOLERANCE = 1e-9;

    private final AggregationProblem problem;
    private final double[] split;
    private final int[] workers;
    private final int[][] choices;
    private final double[] arcLoad;
    private final double[] switchLoad;
    private final double[] ingressLoad;
    private final boolean[] activeGroup;
    private final double rateGbps;

    /**
     * @param workers  node indices of the workers, in the order of {@code choices}
     * @param choices  {@code choices[i][j]}: option id worker {@code workers[i]} uses for PS slot {@code j}, or -1
     *                 when it sends nothing to that PS (zero share)
     */
    public IntegralRouting(AggregationProblem problem, double[] split, int[] workers, int[][] choices) {
        this.problem = problem;
        this.split = split.clone();
        this.workers = workers.clone();
        this.choices = new int[choices.length][];
        for (int i = 0; i < choices.length; i++) {
            this.choices[i] = choices[i].clone();
        }
        Topology topology = problem.topology();
        arcLoad = new double[topology.arcCount()];
        switchLoad = new double[topology.nodeCount()];
        ingressLoad = new double[problem.parameterServerCount()];
        activeGroup = new boolean[problem.groups().size()];
        for (int i = 0; i < workers.length; i++) {
            for (int j = 0; j < split.length; j++) {
                int choice = choices[i][j];
                if (choice < 0 || split[j] == 0) {
                    continue;
                }
                RouteOption option = problem.options().get(choice);
                arcLoad[topology.uplink(workers[i])] += split[j];
                for (int arc : option.fromAccess().arcs()) {
                    arcLoad[arc] += split[j];
                }
                if (option.isDirect()) {
                    ingressLoad[j] += split[j];
                } else {
                    AggregationGroup group = problem.groups().get(option.groupId());
                    switchLoad[group.aggregationSwitch()] += split[j];
                    activeGroup[group.id()] = true;
                }
            }
        }
        for (AggregationGroup group : problem.groups()) {
            if (activeGroup[group.id()]) {
                double share = split[group.psSlot()];
                for (int arc : group.upstream().arcs()) {
                    arcLoad[arc] += share;
                }
                ingressLoad[group.psSlot()] += share;
            }
        }
        double rate = Double.POSITIVE_INFINITY;
        for (int arc = 0; arc < arcLoad.length; arc++) {
            if (arcLoad[arc] > 0) {
                rate = Math.min(rate, topology.arcCapacityGbps(arc) / arcLoad[arc]);
            }
        }
        for (int node = 0; node < switchLoad.length; node++) {
            if (switchLoad[node] > 0) {
                rate = Math.min(rate, topology.node(node).aggregationCapacityGbps() / switchLoad[node]);
            }
        }
        for (int j = 0; j < ingressLoad.length; j++) {
            double ingress = topology.node(problem.parameterServer(j)).ingressGbps();
            if (ingressLoad[j] > 0 && Double.isFinite(ingress)) {
                rate = Math.min(rate, ingress / ingressLoad[j]);
            }
        }
        this.rateGbps = Double.isInfinite(rate) ? 0 : rate;
    }

    /**
     * Sum over resources of the squared load-to-capacity ratio per unit of rate: lower means traffic is spread
     * more evenly, which lets {@link LocalSearch} move across plateaus of equal rate.
     */
    public double congestion() {
        Topology topology = problem.topology();
        double sum = 0;
        for (int arc = 0; arc < arcLoad.length; arc++) {
            if (arcLoad[arc] > 0) {
                double u = arcLoad[arc] / topology.arcCapacityGbps(arc);
                sum += u * u;
            }
        }
        for (int node = 0; node < switchLoad.length; node++) {
            if (switchLoad[node] > 0) {
                double u = switchLoad[node] / topology.node(node).aggregationCapacityGbps();
                sum += u * u;
            }
        }
        for (int j = 0; j < ingressLoad.length; j++) {
            double ingress = topology.node(problem.parameterServer(j)).ingressGbps();
            if (ingressLoad[j] > 0 && Double.isFinite(ingress)) {
                double u = ingressLoad[j] / ingress;
                sum += u * u;
            }
        }
        return sum;
    }

    /** True when this routing is strictly better: a higher rate, or the same rate with less congestion. */
    public boolean isBetterThan(IntegralRouting other) {
        double scale = Math.max(1e-12, Math.max(rateGbps, other.rateGbps));
        if (rateGbps > other.rateGbps + 1e-9 * scale) {
            return true;
        }
        return rateGbps >= other.rateGbps - 1e-9 * scale && congestion() < other.congestion() * (1 - 1e-9);
    }

    /** A copy of the choices, to be changed by a search. */
    int[][] choicesCopy() {
        int[][] copy = new int[choices.length][];
        for (int i = 0; i < choices.length; i++) {
            copy[i] = choices[i].clone();
        }
        return copy;
    }

    /** The common rate this routing sustains without overloading anything. */
    public double rateGbps() {
        return rateGbps;
    }

    /** Resources overloaded if every worker sent at {@code promisedGbps}; empty when the rate is sustainable. */
    public List<CapacityViolation> violationsAt(double promisedGbps) {
        Topology topology = problem.topology();
        List<CapacityViolation> violations = new ArrayList<>();
        for (int arc = 0; arc < arcLoad.length; arc++) {
            check(violations, "link " + topology.describeArc(arc), arcLoad[arc] * promisedGbps,
                topology.arcCapacityGbps(arc));
        }
        for (int node = 0; node < switchLoad.length; node++) {
            if (switchLoad[node] > 0) {
                check(violations, "switch " + topology.node(node).id(), switchLoad[node] * promisedGbps,
                    topology.node(node).aggregationCapacityGbps());
            }
        }
        for (int j = 0; j < ingressLoad.length; j++) {
            check(violations, "ingress " + topology.node(problem.parameterServer(j)).id(),
                ingressLoad[j] * promisedGbps, topology.node(problem.parameterServer(j)).ingressGbps());
        }
        return violations;
    }

    private static void check(List<CapacityViolation> violations, String resource, double load, double capacity) {
        if (load > capacity * (1 + TOLERANCE) + TOLERANCE) {
            violations.add(new CapacityViolation(resource, load, capacity));
        }
    }

    public AggregationProblem problem() {
        return problem;
    }

    public double[] split() {
        return split.clone();
    }

    public int[] workers() {
        return workers.clone();
    }

    public int workerCount() {
        return workers.length;
    }

    public int worker(int position) {
        return workers[position];
    }

    /** Option id for the worker at {@code position} and PS slot {@code psSlot}, or -1. */
    public int choice(int position, int psSlot) {
        return choices[position][psSlot];
    }

    public boolean isGroupActive(int groupId) {
        return activeGroup[groupId];
    }

    /** Load coefficient of an arc: its load is this times the common rate. */
    public double arcCoefficient(int arc) {
        return arcLoad[arc];
    }
}
