package org.inagg.control.inart;

import org.inagg.control.aggregation.AggregationLp;
import org.inagg.control.aggregation.AggregationProblem;
import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.FractionalRouting;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.topology.Topology;

/** Runs InArt's two phases, and the single-split variants used to compare with the paper. */
public final class InArtPlanner {

    private final CandidateSettings candidates;
    private final int draws;
    private final long seed;

    public InArtPlanner(CandidateSettings candidates, int draws, long seed) {
        this.candidates = candidates;
        this.draws = draws;
        this.seed = seed;
    }

    public static InArtPlanner forSmallNetworks() {
        return new InArtPlanner(CandidateSettings.smallNetworks(), 64, 1);
    }

    public static InArtPlanner forFabrics() {
        return new InArtPlanner(CandidateSettings.fabrics(), 16, 1);
    }

    /** Both phases, the split chosen by {@code method}. */
    public InArtResult plan(Topology topology, SplitMethod method) {
        AggregationProblem problem = problem(topology);
        if (method == SplitMethod.EXACT_LP) {
            // The split program's optimum already routes that split: round it instead of solving again.
            FractionalRouting joint = AggregationLp.solveWithBestSplit(problem);
            return new InArtResult(joint.split(), method, RandomizedRounding.round(joint, draws, seed));
        }
        double[] split = split(problem, method);
        return new InArtResult(split, method, route(problem, split));
    }

    /** Phase 2 only, with the split given. */
    public InArtResult planWithSplit(Topology topology, double[] split) {
        AggregationProblem problem = problem(topology);
        return new InArtResult(split, null, route(problem, split));
    }

    /** Phase 1 alone. */
    public double[] split(Topology topology, SplitMethod method) {
        return split(problem(topology), method);
    }

    private double[] split(AggregationProblem problem, SplitMethod method) {
        return switch (method) {
            case EXACT_LP -> AggregationLp.solveWithBestSplit(problem).split();
            case LAGRANGIAN -> lagrangianSplit(problem);
        };
    }

    private double[] lagrangianSplit(AggregationProblem problem) {
        int count = problem.parameterServerCount();
        double[] capacity = new double[count];
        double total = 0;
        for (int j = 0; j < count; j++) {
            double[] alone = new double[count];
            alone[j] = 1;
            capacity[j] = AggregationLp.solveWithSplit(problem, alone).rateGbps();
            total += capacity[j];
        }
        double[] split = new double[count];
        for (int j = 0; j < count; j++) {
            split[j] = total > 0 ? capacity[j] / total : 1.0 / count;
        }
        return split;
    }

    private RandomizedRounding.RoundingResult route(AggregationProblem problem, double[] split) {
        FractionalRouting fractional = AggregationLp.solveWithSplit(problem, split);
        return RandomizedRounding.round(fractional, draws, seed);
    }

    /**
     * Best common rate of a baseline on the given parameter servers, with the split that suits it best (an
     * exact LP, as for InArt), since baselines split per packet and need no rounding.
     */
    public FractionalRouting baseline(Topology topology, RoutingScheme scheme, int[] parameterServers) {
        AggregationProblem problem = AggregationProblem.build(topology, scheme, candidates, topology.workers(),
            parameterServers);
        return AggregationLp.solveWithBestSplit(problem);
    }

    private AggregationProblem problem(Topology topology) {
        return AggregationProblem.build(topology, RoutingScheme.ROUTE_SELECTION, candidates);
    }
}
