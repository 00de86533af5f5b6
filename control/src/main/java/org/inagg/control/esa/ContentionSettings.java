package org.inagg.control.esa;

/**
 * The switch and network side of the model.
 *
 * @param slots            aggregators on the switch
 * @param roundTripTicks   time for an aggregate to reach the PS and its acknowledgement to come back
 * @param maxSkewTicks     workers' packets for one chunk arrive spread over up to this many ticks (the slowest of
 *                         the job's workers decides when the chunk is complete)
 * @param chunkBytes       bytes of one worker's contribution to a chunk, to count fallback bytes
 * @param seed             drives the skew draws
 */
public record ContentionSettings(int slots, int roundTripTicks, int maxSkewTicks, int chunkBytes, long seed) {

    public ContentionSettings {
        if (slots < 1 || roundTripTicks < 0 || maxSkewTicks < 0 || chunkBytes < 1) {
            throw new IllegalArgumentException("settings must be positive");
        }
    }
}
