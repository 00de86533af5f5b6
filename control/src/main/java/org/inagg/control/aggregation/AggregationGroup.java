package org.inagg.control.aggregation;

import org.inagg.control.topology.Path;

/**
 * One aggregated stream: what the workers that chose it send to {@code aggregationSwitch} for parameter server
 * {@code psSlot} is summed there and leaves as a single stream on {@code upstream}.
 *
 * @param id                 position in {@link AggregationProblem#groups()}
 * @param aggregationSwitch  node index of the summing switch
 * @param psSlot             position of the PS in {@link AggregationProblem#parameterServers()}
 * @param upstream           path from the switch to the PS
 */
public record AggregationGroup(int id, int aggregationSwitch, int psSlot, Path upstream) {
}
