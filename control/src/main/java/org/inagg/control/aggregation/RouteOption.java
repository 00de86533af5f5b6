package org.inagg.control.aggregation;

import org.inagg.control.topology.Path;

/**
 * One way for a worker of a class to deliver its share for one PS.
 *
 * @param id                 position in {@link AggregationProblem#options()}
 * @param classId            the worker class
 * @param psSlot             the PS, as a position in {@link AggregationProblem#parameterServers()}
 * @param fromAccess         path from the class's access switch to the aggregation switch, or to the PS when direct
 *                           (the worker's own uplink comes before it)
 * @param groupId            the aggregation group joined, or -1 when the share goes straight to the PS
 */
public record RouteOption(int id, int classId, int psSlot, Path fromAccess, int groupId) {

    public boolean isDirect() {
        return groupId < 0;
    }
}
