package org.inagg.control.aggregation;

import org.inagg.control.lp.LinearProgram;
import org.inagg.control.lp.LpSolution;
import org.inagg.control.topology.Node;
import org.inagg.control.topology.Topology;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The fractional routing program, solved by ojAlgo. Variables: {@code f[o]}, the rate one worker of the option's
 * class sends on option {@code o}; {@code z[g]}, the rate of group {@code g}'s aggregated stream; and either the
 * common rate {@code lambda} (split fixed) or {@code d[j]}, the rate every worker sends to PS {@code j} (split chosen;
 * then {@code lambda = sum d[j]} and the split is {@code d[j]/lambda}, which keeps the program linear).
 * <pre>
 * maximise   lambda                      (or sum_j d[j])
 * demand     sum_{o of (c,j)} f[o] = split[j]*lambda      (or d[j])       for every class c and PS j
 * host       sum_{o of c} f[o] &lt;= uplink(c)                               one worker's own link
 * link       sum_{o crossing e} n(c) f[o] + sum_{g crossing e} z[g] &lt;= cap(e)
 * switch     sum_{o aggregated at s} n(c) f[o] &lt;= aggregationCapacity(s)
 * ingress    sum_{o direct to j} n(c) f[o] + sum_{g to j} z[g] &lt;= ingress(j)
 * stream     z[g] &gt;= sum_{o of (c,g)} f[o]                                  for every class c using g
 * </pre>
 * The stream row says a sum is as fast as the fastest contribution it carries: every member's share passes
 * through the same stream once.
 */
public final class AggregationLp {

    private AggregationLp() {
    }

    /** Maximises the common rate with the model split among PSs as {@code split} (summing to 1). */
    public static FractionalRouting solveWithSplit(AggregationProblem problem, double[] split) {
        if (split.length != problem.parameterServerCount()) {
            throw new IllegalArgumentException("split has " + split.length + " shares for "
                + problem.parameterServerCount() + " parameter servers");
        }
        double sum = 0;
        for (double share : split) {
            if (share < 0) {
                throw new IllegalArgumentException("negative share in split");
            }
            sum += share;
        }
        if (Math.abs(sum - 1) > 1e-9) {
            throw new IllegalArgumentException("split must sum to 1, sums to " + sum);
        }
        return solve(problem, split.clone());
    }

    /** Maximises the common rate choosing the split too (exact: the split enters linearly through d[j]). */
    public static FractionalRouting solveWithBestSplit(AggregationProblem problem) {
        return solve(problem, null);
    }

    /** A single PS: the whole model goes to it. */
    public static FractionalRouting solve(AggregationProblem problem) {
        double[] split = new double[problem.parameterServerCount()];
        if (split.length == 1) {
            split[0] = 1;
            return solve(problem, split);
        }
        return solve(problem, null);
    }

    private static FractionalRouting solve(AggregationProblem problem, double[] fixedSplit) {
        long started = System.nanoTime();
        Topology topology = problem.topology();
        LinearProgram lp = new LinearProgram();
        int psCount = problem.parameterServerCount();
        int lambda = -1;
        int[] share = new int[psCount];
        if (fixedSplit != null) {
            lambda = lp.nonNegative("lambda", 1);
        } else {
            for (int j = 0; j < psCount; j++) {
                share[j] = lp.nonNegative("d" + j, 1);
            }
        }
        List<RouteOption> options = problem.options();
        int[] f = new int[options.size()];
        for (RouteOption option : options) {
            f[option.id()] = lp.nonNegative("f" + option.id(), 0);
        }
        List<AggregationGroup> groups = problem.groups();
        int[] z = new int[groups.size()];
        for (AggregationGroup group : groups) {
            z[group.id()] = lp.nonNegative("z" + group.id(), 0);
        }

        for (WorkerClass workerClass : problem.classes()) {
            LinearProgram.Row host = lp.row("host" + workerClass.id());
            for (int j = 0; j < psCount; j++) {
                LinearProgram.Row demand = lp.row("demand" + workerClass.id() + "_" + j);
                for (RouteOption option : problem.options(workerClass.id(), j)) {
                    demand.plus(f[option.id()], 1);
                    host.plus(f[option.id()], 1);
                }
                if (fixedSplit != null) {
                    demand.plus(lambda, -fixedSplit[j]);
                } else {
                    demand.plus(share[j], -1);
                }
                demand.equalTo(0);
            }
            host.atMost(workerClass.hostGbps());
        }

        Map<Integer, List<double[]>> arcTerms = new HashMap<>();
        Map<Integer, List<double[]>> switchTerms = new HashMap<>();
        List<List<double[]>> ingressTerms = new ArrayList<>();
        for (int j = 0; j < psCount; j++) {
            ingressTerms.add(new ArrayList<>());
        }
        Map<Long, List<Integer>> streamMembers = new HashMap<>();
        for (RouteOption option : options) {
            int members = problem.classes().get(option.classId()).size();
            for (int arc : option.fromAccess().arcs()) {
                arcTerms.computeIfAbsent(arc, k -> new ArrayList<>()).add(new double[] {f[option.id()], members});
            }
            if (option.isDirect()) {
                ingressTerms.get(option.psSlot()).add(new double[] {f[option.id()], members});
            } else {
                AggregationGroup group = groups.get(option.groupId());
                switchTerms.computeIfAbsent(group.aggregationSwitch(), k -> new ArrayList<>())
                    .add(new double[] {f[option.id()], members});
                long key = (long) option.groupId() * problem.classes().size() + option.classId();
                streamMembers.computeIfAbsent(key, k -> new ArrayList<>()).add(f[option.id()]);
            }
        }
        for (AggregationGroup group : groups) {
            for (int arc : group.upstream().arcs()) {
                arcTerms.computeIfAbsent(arc, k -> new ArrayList<>()).add(new double[] {z[group.id()], 1});
            }
            ingressTerms.get(group.psSlot()).add(new double[] {z[group.id()], 1});
        }
        for (var entry : arcTerms.entrySet()) {
            addRow(lp, "arc" + entry.getKey(), entry.getValue(), topology.arcCapacityGbps(entry.getKey()));
        }
        for (var entry : switchTerms.entrySet()) {
            addRow(lp, "switch" + entry.getKey(), entry.getValue(),
                topology.node(entry.getKey()).aggregationCapacityGbps());
        }
        for (int j = 0; j < psCount; j++) {
            Node ps = topology.node(problem.parameterServer(j));
            if (Double.isFinite(ps.ingressGbps())) {
                addRow(lp, "ingress" + j, ingressTerms.get(j), ps.ingressGbps());
            }
        }
        for (var entry : streamMembers.entrySet()) {
            int groupId = (int) (entry.getKey() / problem.classes().size());
            LinearProgram.Row stream = lp.row("stream" + entry.getKey());
            stream.plus(z[groupId], 1);
            for (int variable : entry.getValue()) {
                stream.plus(variable, -1);
            }
            stream.atLeast(0);
        }

        LpSolution solution = lp.maximise();
        double rate = solution.objective();
        double[] split = new double[psCount];
        for (int j = 0; j < psCount; j++) {
            split[j] = fixedSplit != null ? fixedSplit[j]
                : rate > 0 ? solution.value(share[j]) / rate : 1.0 / psCount;
        }
        double[] optionRates = new double[options.size()];
        for (int o = 0; o < options.size(); o++) {
            optionRates[o] = Math.max(0, solution.value(f[o]));
        }
        double[] streamRates = new double[groups.size()];
        for (int g = 0; g < groups.size(); g++) {
            streamRates[g] = Math.max(0, solution.value(z[g]));
        }
        return new FractionalRouting(problem, rate, split, optionRates, streamRates, lp.variableCount(),
            lp.rowCount(), (System.nanoTime() - started) / 1e9);
    }

    private static void addRow(LinearProgram lp, String name, List<double[]> terms, double capacity) {
        LinearProgram.Row row = lp.row(name);
        for (double[] term : terms) {
            row.plus((int) term[0], term[1]);
        }
        row.atMost(capacity);
    }
}
