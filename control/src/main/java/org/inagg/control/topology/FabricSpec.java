package org.inagg.control.topology;

/**
 * How to dress a generated fabric.
 *
 * @param fabricGbps            bandwidth of switch-to-switch links
 * @param hostGbps              bandwidth of worker and parameter-server links
 * @param programmableFraction  share of switches that can aggregate, chosen at random by {@code seed}
 * @param aggregationGbps       aggregation capacity of a programmable switch
 * @param aggregatorSlots       aggregator memory of a programmable switch, in slots
 * @param psIngressGbps         ingress limit of each parameter server
 * @param backgroundLoadMax     each fabric link gets a background load drawn uniformly from
 *                              [0, backgroundLoadMax * fabricGbps); 0 gives a homogeneous fabric
 * @param seed                  drives every random choice, so a spec always gives the same topology
 */
public record FabricSpec(double fabricGbps, double hostGbps, double programmableFraction, double aggregationGbps,
                         long aggregatorSlots, double psIngressGbps, double backgroundLoadMax, long seed) {

    public FabricSpec {
        if (programmableFraction < 0 || programmableFraction > 1 || backgroundLoadMax < 0 || backgroundLoadMax >= 1) {
            throw new IllegalArgumentException("fractions must lie in [0,1)");
        }
    }

    /** 100 Gb/s everywhere, all switches programmable with 1.6 Tb/s of aggregation. */
    public static FabricSpec uniform100G() {
        return new FabricSpec(100, 100, 1.0, 1600, 40_000, 100, 0, 1);
    }

    public FabricSpec withProgrammableFraction(double fraction) {
        return new FabricSpec(fabricGbps, hostGbps, fraction, aggregationGbps, aggregatorSlots, psIngressGbps,
            backgroundLoadMax, seed);
    }

    public FabricSpec withBackgroundLoadMax(double max) {
        return new FabricSpec(fabricGbps, hostGbps, programmableFraction, aggregationGbps, aggregatorSlots,
            psIngressGbps, max, seed);
    }

    public FabricSpec withSeed(long newSeed) {
        return new FabricSpec(fabricGbps, hostGbps, programmableFraction, aggregationGbps, aggregatorSlots,
            psIngressGbps, backgroundLoadMax, newSeed);
    }

    public FabricSpec withAggregationGbps(double gbps) {
        return new FabricSpec(fabricGbps, hostGbps, programmableFraction, gbps, aggregatorSlots, psIngressGbps,
            backgroundLoadMax, seed);
    }
}
