package org.inagg.control.aggregation;

/**
 * How many routes a worker may choose from.
 *
 * @param pathSlack  paths may be this many hops longer than the shortest (1 is what the GRID example needs: W4
 *                   reaches the PS over S1-S2-S3)
 * @param pathLimit  at most this many paths per (worker class, PS)
 * @param seed       spreads the kept paths over the fabric and drives ECMP hashing
 */
public record CandidateSettings(int pathSlack, int pathLimit, long seed) {

    public CandidateSettings {
        if (pathSlack < 0 || pathLimit < 1) {
            throw new IllegalArgumentException("slack must be >= 0 and limit >= 1");
        }
    }

    /** Suits small examples: one hop of detour, up to 8 paths. */
    public static CandidateSettings smallNetworks() {
        return new CandidateSettings(1, 8, 7);
    }

    /** Suits data-centre fabrics: shortest paths only, up to 4 per class. */
    public static CandidateSettings fabrics() {
        return new CandidateSettings(0, 4, 7);
    }
}
