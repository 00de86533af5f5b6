package org.inagg.control.inart;

import org.inagg.control.aggregation.RandomizedRounding;

/**
 * The outcome of both phases.
 *
 * @param split      share of the model each PS holds (phase 1)
 * @param method     how the split was chosen, or null when the caller fixed it
 * @param routing    phase 2: fractional optimum, rounded routing and any violations
 */
public record InArtResult(double[] split, SplitMethod method, RandomizedRounding.RoundingResult routing) {

    public InArtResult {
        split = split.clone();
    }

    /** Common worker rate of the rounded routing. */
    public double rateGbps() {
        return routing.rateGbps();
    }

    /** Seconds to push a gradient of {@code modelGigabits} at that rate. */
    public double communicationSeconds(double modelGigabits) {
        return modelGigabits / rateGbps();
    }
}
