package org.inagg.control.aggregation;

/**
 * A resource that a rounded routing overloads at the rate the fractional program promised.
 *
 * @param resource  what is overloaded, e.g. {@code link S1->S3}, {@code switch S1}, {@code ingress PS}
 * @param loadGbps  what would cross it at the promised rate
 * @param capacityGbps what it can take
 */
public record CapacityViolation(String resource, double loadGbps, double capacityGbps) {

    public double overloadFactor() {
        return loadGbps / capacityGbps;
    }
}
