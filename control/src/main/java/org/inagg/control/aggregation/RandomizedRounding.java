package org.inagg.control.aggregation;

import org.inagg.control.lp.Cancellation;

import java.util.List;
import java.util.SplittableRandom;

/**
 * Turns a fractional routing into one route per worker and PS, as GRID and InArt do: each worker draws its option
 * with probability proportional to the rate the program put on it. Draw 0 instead takes each worker's largest
 * option (deterministic, often already the best); the best of {@code draws} draws is kept and, where affordable,
 * improved by {@link LocalSearch}. Seeded, so a plan can be made again bit for bit.
 */
public final class RandomizedRounding {

    private RandomizedRounding() {
    }

    public static RoundingResult round(FractionalRouting fractional, int draws, long seed) {
        if (draws < 1) {
            throw new IllegalArgumentException("need at least one draw");
        }
        AggregationProblem problem = fractional.problem();
        int[] workers = problem.classes().stream().flatMapToInt(c -> java.util.Arrays.stream(c.workers()))
            .sorted().toArray();
        SplittableRandom random = new SplittableRandom(seed);
        IntegralRouting best = null;
        double[] drawRates = new double[draws];
        for (int draw = 0; draw < draws; draw++) {
            Cancellation.check("rounding draw " + draw + " of " + draws);
            int[][] choices = new int[workers.length][problem.parameterServerCount()];
            for (int i = 0; i < workers.length; i++) {
                int classId = problem.classOf(workers[i]);
                for (int j = 0; j < problem.parameterServerCount(); j++) {
                    choices[i][j] = fractional.split()[j] == 0 ? -1
                        : pick(problem.options(classId, j), fractional, draw == 0 ? null : random);
                }
            }
            IntegralRouting candidate = new IntegralRouting(problem, fractional.split(), workers, choices);
            drawRates[draw] = candidate.rateGbps();
            if (best == null || candidate.rateGbps() > best.rateGbps()) {
                best = candidate;
            }
        }
        double roundedRate = best.rateGbps();
        boolean searched = false;
        if (LocalSearch.isAffordable(problem)) {
            best = LocalSearch.improve(best, 20);
            searched = true;
        }
        return new RoundingResult(fractional, best, drawRates, roundedRate, searched,
            best.violationsAt(fractional.rateGbps()));
    }

    private static int pick(List<RouteOption> options, FractionalRouting fractional, SplittableRandom random) {
        if (options.isEmpty()) {
            return -1;
        }
        double total = 0;
        int largest = options.get(0).id();
        for (RouteOption option : options) {
            double rate = fractional.optionRate(option.id());
            total += rate;
            if (rate > fractional.optionRate(largest)) {
                largest = option.id();
            }
        }
        if (random == null || total <= 0) {
            return largest;
        }
        double target = random.nextDouble() * total;
        for (RouteOption option : options) {
            target -= fractional.optionRate(option.id());
            if (target < 0) {
                return option.id();
            }
        }
        return largest;
    }

    /**
     * @param fractional   the program's optimum, an upper bound on any rounding
     * @param best         the best draw
     * @param drawRates    the rate each draw reached, in draw order
     * @param bestDrawRate the best draw's rate before local search
     * @param locallySearched whether {@link LocalSearch} ran on the best draw (it does on small instances)
     * @param violations   what the best draw overloads at the fractional rate (empty when rounding lost nothing)
     */
    public record RoundingResult(FractionalRouting fractional, IntegralRouting best, double[] drawRates,
                                 double bestDrawRate, boolean locallySearched, List<CapacityViolation> violations) {

        public RoundingResult {
            drawRates = drawRates.clone();
            violations = List.copyOf(violations);
        }

        public double rateGbps() {
            return best.rateGbps();
        }
    }
}
