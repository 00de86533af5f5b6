package org.inagg.control.grid;

import org.inagg.control.aggregation.AggregationLp;
import org.inagg.control.aggregation.AggregationProblem;
import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.FractionalRouting;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.topology.Topology;

import java.util.EnumMap;
import java.util.Map;

/**
 * Runs GRID and its baselines on a topology with one parameter server (with several, each PS gets the same share
 * of the model; use InArt to choose the split).
 */
public final class GridPlanner {

    private final CandidateSettings candidates;
    private final int draws;
    private final long seed;

    public GridPlanner(CandidateSettings candidates, int draws, long seed) {
        this.candidates = candidates;
        this.draws = draws;
        this.seed = seed;
    }

    /** Suits the papers' small examples. */
    public static GridPlanner forSmallNetworks() {
        return new GridPlanner(CandidateSettings.smallNetworks(), 64, 1);
    }

    /** Suits fat-trees and spine-leaf fabrics. */
    public static GridPlanner forFabrics() {
        return new GridPlanner(CandidateSettings.fabrics(), 16, 1);
    }

    /** GRID itself: LP relaxation, then the best of the rounding draws. */
    public RandomizedRounding.RoundingResult plan(Topology topology) {
        return plan(topology, RoutingScheme.ROUTE_SELECTION);
    }

    /**
     * A scheme's LP rounded to one route per worker (the same draws and local search as GRID's, within the options
     * the scheme allows): a plan that a fabric can deploy for a baseline too, whose rate is that of one path per
     * worker rather than the baseline's per-packet split ({@link #baseline}).
     */
    public RandomizedRounding.RoundingResult plan(Topology topology, RoutingScheme scheme) {
        AggregationProblem problem = AggregationProblem.build(topology, scheme, candidates);
        return RandomizedRounding.round(AggregationLp.solveWithSplit(problem, evenSplit(problem)), draws, seed);
    }

    /** The minimum sending rate of a baseline, which splits per packet and so needs no rounding. */
    public FractionalRouting baseline(Topology topology, RoutingScheme scheme) {
        AggregationProblem problem = AggregationProblem.build(topology, scheme, candidates);
        return AggregationLp.solveWithSplit(problem, evenSplit(problem));
    }

    /** Minimum sending rate of every scheme; for GRID the rounded rate. */
    public Map<RoutingScheme, Double> compare(Topology topology) {
        Map<RoutingScheme, Double> rates = new EnumMap<>(RoutingScheme.class);
        for (RoutingScheme scheme : RoutingScheme.values()) {
            rates.put(scheme, scheme == RoutingScheme.ROUTE_SELECTION ? plan(topology).rateGbps()
                : baseline(topology, scheme).rateGbps());
        }
        return rates;
    }

    private static double[] evenSplit(AggregationProblem problem) {
        double[] split = new double[problem.parameterServerCount()];
        java.util.Arrays.fill(split, 1.0 / split.length);
        return split;
    }
}
