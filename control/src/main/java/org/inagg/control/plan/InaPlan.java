package org.inagg.control.plan;

import java.util.List;
import java.util.Map;

/**
 * The configuration the rest of inagg reads, as plain values (ids, not indices), so that a reader needs neither
 * the topology classes nor the planners. Serialised by {@link PlanJson}; fields documented in
 * {@code control/README.md}.
 *
 * @param schema             always {@link PlanJson#SCHEMA}
 * @param topology           name of the topology planned for
 * @param algorithm          {@code grid} (one PS) or {@code inart}
 * @param rateGbps           common worker rate the plan sustains
 * @param lpBoundGbps        the LP optimum, an upper bound on any plan
 * @param split              PS id to the share of the model it holds
 * @param workers            every worker's route for each PS
 * @param switchJobTables    switch id to its aggregation entries
 * @param multicastTrees     distribution trees, as per-hop port lists
 * @param violationsAtLpRate what the plan would overload at the LP rate
 */
public record InaPlan(String schema, String topology, String algorithm, double rateGbps, double lpBoundGbps,
                      Map<String, Double> split, List<WorkerRoute> workers,
                      Map<String, List<SwitchJobEntry>> switchJobTables, List<MulticastTreeConfig> multicastTrees,
                      List<Violation> violationsAtLpRate) {

    /** One worker and its share for every PS. */
    public record WorkerRoute(String worker, List<Share> shares) {
    }

    /**
     * @param ps           the PS this share belongs to
     * @param share        fraction of the model
     * @param aggregateAt  switch that sums it, or the PS id when it goes straight there
     * @param group        job id in that switch's table; null when direct
     * @param path         node ids from the worker to {@code aggregateAt}
     */
    public record Share(String ps, double share, String aggregateAt, Integer group, List<String> path) {
    }

    /**
     * One row of a switch's job table.
     *
     * @param jobId                 id packets of this group carry
     * @param ps                    where the sum goes
     * @param expectedContributors  how many shares to sum before the result leaves
     * @param contributors          worker ids expected
     * @param upstreamPort          port the sum leaves on
     * @param upstreamPath          node ids from this switch to the PS
     */
    public record SwitchJobEntry(int jobId, String ps, int expectedContributors, List<String> contributors,
                                 int upstreamPort, List<String> upstreamPath) {
    }

    /** A multicast tree: for every forwarding node, the ports a packet leaves on. */
    public record MulticastTreeConfig(String source, List<String> receivers, Map<String, List<Integer>> ports) {
    }

    /** A resource overloaded at the LP rate. */
    public record Violation(String resource, double loadGbps, double capacityGbps) {
    }
}
