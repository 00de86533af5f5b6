package org.inagg.control.deploy;

import org.inagg.control.plan.InaPlan;
import org.inagg.control.topology.Node;
import org.inagg.control.topology.Topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The rate a plan's routes allow each worker, in Gb/s of the topology, counted stream by stream from the plan file: in
 * the planners' direction (gradients up: each worker's path to where it is summed, each switch's one partial to its
 * PS, a switch's aggregation capacity and a PS's ingress shared by what reaches them), and in the results' direction
 * as the datapath sends them. With results down the tree (the default of {@code inagg switch --upstream}) the PS
 * sends each result once to every switch that summed for it, back along that switch's upstream path, and the switch
 * multicasts it to its workers along their paths; a worker summed at the PS itself gets its result from the PS. With
 * {@code --no-results-down} the PS answers every worker itself, back along the worker's whole path, so a link carries
 * one result per worker behind it. The planners model only the first direction.
 *
 * @param upGbps   the most each worker can send (the planner's rate for the same routes).
 * @param downGbps the most each worker can receive, results sent as the datapath sends them.
 * @param upLimit  what limits the first: a link direction, a switch or a PS.
 * @param downLimit what limits the second.
 */
public record PlanLoad(double upGbps, double downGbps, String upLimit, String downLimit) {

    /** Both directions together: the slower. */
    public double rateGbps() {
        return Math.min(upGbps, downGbps);
    }

    /**
     * Counts the plan's streams on {@code topology}.
     *
     * @throws IllegalArgumentException naming a node of the plan that the topology lacks or a path's hop no link joins.
     */
    public static PlanLoad of(Topology topology, InaPlan plan) {
        return of(topology, plan, true);
    }

    /**
     * Counts the plan's streams on {@code topology}, results down the tree or not ({@code resultsDown}).
     *
     * @throws IllegalArgumentException naming a node of the plan that the topology lacks or a path's hop no link joins.
     */
    public static PlanLoad of(Topology topology, InaPlan plan, boolean resultsDown) {
        double[] up = new double[topology.arcCount()];
        double[] down = new double[topology.arcCount()];
        double[] node = new double[topology.nodeCount()];
        for (InaPlan.WorkerRoute route : plan.workers()) {
            for (InaPlan.Share share : route.shares()) {
                List<String> full = new ArrayList<>(share.path());
                add(topology, share.path(), up, share.share(), false);
                node[index(topology, share.aggregateAt())] += share.share();
                if (!resultsDown && !share.aggregateAt().equals(share.ps())) {
                    List<String> upstream = upstreamOf(plan, share);
                    full.addAll(upstream.subList(1, upstream.size()));
                }
                add(topology, full, down, share.share(), true);
            }
        }
        for (Map.Entry<String, List<InaPlan.SwitchJobEntry>> table : plan.switchJobTables().entrySet()) {
            for (InaPlan.SwitchJobEntry row : table.getValue()) {
                double share = plan.split().getOrDefault(row.ps(), 0.0);
                add(topology, row.upstreamPath(), up, share, false);
                if (resultsDown) {
                    add(topology, row.upstreamPath(), down, share, true);
                }
                node[index(topology, row.ps())] += share;
            }
        }
        PlanLoad links = new PlanLoad(slowestArc(topology, up).upGbps(), slowestArc(topology, down).upGbps(),
            slowestArc(topology, up).upLimit(), slowestArc(topology, down).upLimit());
        double upRate = links.upGbps();
        String upLimit = links.upLimit();
        for (int i = 0; i < node.length; i++) {
            Node n = topology.node(i);
            double capacity = n.isSwitch() ? n.aggregationCapacityGbps()
                : n.isParameterServer() ? n.ingressGbps() : Double.POSITIVE_INFINITY;
            if (node[i] > 0 && capacity / node[i] < upRate) {
                upRate = capacity / node[i];
                upLimit = (n.isSwitch() ? "switch " : "PS ") + n.id();
            }
        }
        return new PlanLoad(upRate, links.downGbps(), upLimit, links.downLimit());
    }

    /** The rate the busiest link direction of {@code load} allows, and which it is (in the up fields). */
    private static PlanLoad slowestArc(Topology topology, double[] load) {
        double rate = Double.POSITIVE_INFINITY;
        String limit = "nothing";
        for (int arc = 0; arc < load.length; arc++) {
            if (load[arc] > 0 && topology.arcCapacityGbps(arc) / load[arc] < rate) {
                rate = topology.arcCapacityGbps(arc) / load[arc];
                limit = "link " + topology.describeArc(arc);
            }
        }
        return new PlanLoad(rate, Double.POSITIVE_INFINITY, limit, "nothing");
    }

    /** The upstream path of the switch row that sums {@code share}. */
    public static List<String> upstreamOf(InaPlan plan, InaPlan.Share share) {
        for (InaPlan.SwitchJobEntry row : plan.switchJobTables().getOrDefault(share.aggregateAt(), List.of())) {
            if (row.ps().equals(share.ps()) && share.group() != null && row.jobId() == share.group()) {
                return row.upstreamPath();
            }
        }
        throw new IllegalArgumentException("plan sends a share to switch " + share.aggregateAt() + " group "
            + share.group() + " for PS " + share.ps() + ", but that switch's table has no such row");
    }

    /** Adds {@code amount} to every arc of {@code path} (backwards when {@code reversed}). */
    private static void add(Topology topology, List<String> path, double[] load, double amount, boolean reversed) {
        for (int j = 0; j + 1 < path.size(); j++) {
            int from = index(topology, path.get(j));
            int to = index(topology, path.get(j + 1));
            int arc = reversed ? topology.arcBetween(to, from) : topology.arcBetween(from, to);
            if (arc < 0) {
                throw new IllegalArgumentException("plan path " + path + ": no link joins " + path.get(j) + " and "
                    + path.get(j + 1));
            }
            load[arc] += amount;
        }
    }

    private static int index(Topology topology, String id) {
        if (!topology.contains(id)) {
            throw new IllegalArgumentException("plan names node '" + id + "', which topology " + topology.name()
                + " lacks");
        }
        return topology.index(id);
    }
}
