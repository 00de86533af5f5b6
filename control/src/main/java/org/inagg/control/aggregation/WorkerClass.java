package org.inagg.control.aggregation;

/**
 * Workers the program cannot tell apart: same access switch, same host uplink capacity, same ECMP bucket.
 *
 * @param id            position in {@link AggregationProblem#classes()}
 * @param accessSwitch  node index of the switch the workers hang off
 * @param hostGbps      capacity of each worker's uplink
 * @param ecmpBucket    which hashed path the workers take under an ECMP scheme (0 otherwise)
 * @param workers       node indices of the workers
 */
public record WorkerClass(int id, int accessSwitch, double hostGbps, int ecmpBucket, int[] workers) {

    public WorkerClass {
        workers = workers.clone();
    }

    public int size() {
        return workers.length;
    }
}
