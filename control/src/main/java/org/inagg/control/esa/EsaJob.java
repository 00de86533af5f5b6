package org.inagg.control.esa;

/**
 * One training job in the contention model. Time is in ticks: one tick is the time a worker takes to send one
 * chunk (one aggregator's worth of gradient).
 *
 * @param workers             workers whose chunks are summed
 * @param chunksPerIteration  gradient size in chunks
 * @param iterations          iterations until the job completes
 * @param computeTicks        compute time between two synchronisations
 * @param arrivalTick         when the job starts
 */
public record EsaJob(int workers, int chunksPerIteration, int iterations, int computeTicks, long arrivalTick) {

    public EsaJob {
        if (workers < 1 || chunksPerIteration < 1 || iterations < 1 || computeTicks < 0 || arrivalTick < 0) {
            throw new IllegalArgumentException("job parameters must be positive");
        }
    }
}
