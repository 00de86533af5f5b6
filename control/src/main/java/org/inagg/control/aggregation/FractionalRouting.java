package org.inagg.control.aggregation;

/**
 * The optimum of {@link AggregationLp}: the common rate every worker reaches when shares may be split over
 * options, the model split among PSs, and the rate on every option and stream.
 *
 * @param rateGbps       the common per-worker sending rate (the program's optimum)
 * @param split          share of the model each PS holds
 * @param optionRates    per-worker rate on each option, by option id
 * @param streamRates    rate of each aggregated stream, by group id
 * @param variables      size of the program, for reports
 * @param rows           size of the program, for reports
 * @param solveSeconds   wall time spent building and solving
 */
public record FractionalRouting(AggregationProblem problem, double rateGbps, double[] split, double[] optionRates,
                                double[] streamRates, int variables, int rows, double solveSeconds) {

    public FractionalRouting {
        split = split.clone();
        optionRates = optionRates.clone();
        streamRates = streamRates.clone();
    }

    public double optionRate(int option) {
        return optionRates[option];
    }
}
