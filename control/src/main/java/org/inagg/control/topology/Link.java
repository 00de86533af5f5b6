package org.inagg.control.topology;

import java.util.Objects;

/**
 * A full-duplex link: each direction has {@code bandwidthGbps}, of which {@code backgroundGbps} is already taken by
 * traffic that is not ours.
 */
public record Link(String a, String b, double bandwidthGbps, double backgroundGbps) {

    public Link {
        Objects.requireNonNull(a, "a");
        Objects.requireNonNull(b, "b");
        if (a.equals(b)) {
            throw new IllegalArgumentException("self loop on " + a);
        }
        if (!(bandwidthGbps > 0) || backgroundGbps < 0 || backgroundGbps >= bandwidthGbps) {
            throw new IllegalArgumentException("link " + a + "-" + b
                + ": bandwidth must be positive and background load below it");
        }
    }

    public Link(String a, String b, double bandwidthGbps) {
        this(a, b, bandwidthGbps, 0);
    }

    /** What is left for our traffic in each direction. */
    public double availableGbps() {
        return bandwidthGbps - backgroundGbps;
    }
}
