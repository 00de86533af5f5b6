package org.inagg.control.aggregation;

import org.inagg.control.lp.LinearProgram;
import org.inagg.control.lp.LpSolution;
import org.inagg.control.topology.Topology;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The exact unsplittable optimum, as a mixed-integer program, to measure how much rounding loses on small
 * instances. With every worker at the common rate {@code lambda}, each resource's load is {@code lambda} times a
 * count that depends only on the choices; writing {@code t = 1/lambda} makes the program linear:
 * <pre>
 * minimise t   subject to   load_r(x, y) &lt;= capacity_r * t  for every link, switch and PS ingress
 *              (capacities divided by the largest, so that t is of order one)
 *              sum_o x[w,j,o] = 1,  y[g] &gt;= x[w,j,o] for o in g,  x binary, 0 &lt;= y &lt;= 1
 * </pre>
 * {@code y[g]} (the group's stream exists) needs no integrality: it only adds load, so an optimum takes it as
 * small as {@code max x}, which is 0 or 1.
 * <pre>
 * </pre>
 * One binary per worker, PS and option: meant for examples with tens of workers, not fabrics.
 */
public final class IntegralOptimum {

    private IntegralOptimum() {
    }

    /** The best common rate any unsplittable routing reaches with the given split. */
    public static double rateGbps(AggregationProblem problem, double[] split) {
        return rateGbps(problem, split, null);
    }

    /** With {@code forced} not null, every worker's choice is pinned to it: checks a routing against the model. */
    static double rateGbps(AggregationProblem problem, double[] split, IntegralRouting forced) {
        java.util.Map<Integer, Integer> position = new java.util.HashMap<>();
        if (forced != null) {
            for (int i = 0; i < forced.workerCount(); i++) {
                position.put(forced.worker(i), i);
            }
        }
        Topology topology = problem.topology();
        LinearProgram mip = new LinearProgram();
        // t is scaled by the largest capacity so that it is of order one: the solver's tolerances are absolute
        // enough that an objective of order 0.1 let it stop 1% short of the optimum.
        double scale = largestCapacity(problem);
        int t = mip.nonNegative("t", 1);
        int[] y = new int[problem.groups().size()];
        for (AggregationGroup group : problem.groups()) {
            y[group.id()] = mip.variable("y" + group.id(), 0, 1, 0);
        }
        Map<Integer, List<double[]>> arcTerms = new HashMap<>();
        Map<Integer, List<double[]>> switchTerms = new HashMap<>();
        List<List<double[]>> ingressTerms = new ArrayList<>();
        for (int j = 0; j < split.length; j++) {
            ingressTerms.add(new ArrayList<>());
        }
        for (WorkerClass workerClass : problem.classes()) {
            for (int worker : workerClass.workers()) {
                for (int j = 0; j < split.length; j++) {
                    List<RouteOption> options = problem.options(workerClass.id(), j);
                    if (split[j] == 0 || options.isEmpty()) {
                        continue;
                    }
                    arcTerms.computeIfAbsent(topology.uplink(worker), k -> new ArrayList<>())
                        .add(new double[] {-1, split[j]});
                    LinearProgram.Row one = mip.row("one" + worker + "_" + j);
                    for (RouteOption option : options) {
                        int x = mip.binary("x" + worker + "_" + option.id(), 0);
                        one.plus(x, 1);
                        if (forced != null && forced.choice(position.get(worker), j) == option.id()) {
                            mip.row("forced").plus(x, 1).atLeast(1);
                        }
                        for (int arc : option.fromAccess().arcs()) {
                            arcTerms.computeIfAbsent(arc, k -> new ArrayList<>()).add(new double[] {x, split[j]});
                        }
                        if (option.isDirect()) {
                            ingressTerms.get(j).add(new double[] {x, split[j]});
                        } else {
                            AggregationGroup group = problem.groups().get(option.groupId());
                            switchTerms.computeIfAbsent(group.aggregationSwitch(), k -> new ArrayList<>())
                                .add(new double[] {x, split[j]});
                            LinearProgram.Row member = mip.row("member" + x);
                            member.plus(y[group.id()], 1).plus(x, -1);
                            member.atLeast(0);
                        }
                    }
                    one.equalTo(1);
                }
            }
        }
        for (AggregationGroup group : problem.groups()) {
            double share = split[group.psSlot()];
            for (int arc : group.upstream().arcs()) {
                arcTerms.computeIfAbsent(arc, k -> new ArrayList<>()).add(new double[] {y[group.id()], share});
            }
            ingressTerms.get(group.psSlot()).add(new double[] {y[group.id()], share});
        }
        for (var entry : arcTerms.entrySet()) {
            bound(mip, entry.getValue(), t, topology.arcCapacityGbps(entry.getKey()) / scale);
        }
        for (var entry : switchTerms.entrySet()) {
            bound(mip, entry.getValue(), t, topology.node(entry.getKey()).aggregationCapacityGbps() / scale);
        }
        for (int j = 0; j < split.length; j++) {
            double ingress = topology.node(problem.parameterServer(j)).ingressGbps();
            if (Double.isFinite(ingress)) {
                bound(mip, ingressTerms.get(j), t, ingress / scale);
            }
        }
        LpSolution solution = mip.minimise();
        return solution.objective() > 0 ? scale / solution.objective() : 0;
    }

    private static double largestCapacity(AggregationProblem problem) {
        Topology topology = problem.topology();
        double largest = 0;
        for (int arc = 0; arc < topology.arcCount(); arc++) {
            largest = Math.max(largest, topology.arcCapacityGbps(arc));
        }
        return largest;
    }

    /** {@code sum terms <= capacity * t}; a term with variable -1 is a constant (a worker's own uplink). */
    private static void bound(LinearProgram mip, List<double[]> terms, int t, double capacity) {
        LinearProgram.Row row = mip.row("cap");
        double constant = 0;
        for (double[] term : terms) {
            if (term[0] < 0) {
                constant += term[1];
            } else {
                row.plus((int) term[0], term[1]);
            }
        }
        row.plus(t, -capacity);
        row.atMost(-constant);
    }
}
