package org.inagg.control.aggregation;

/** What choices a scheme gives a worker. */
public enum RoutingScheme {
    /** No aggregation in the network: every gradient goes to the PS, split over any candidate path. */
    NO_INA,
    /**
     * SwitchML: aggregation at the first programmable switch on the worker's ECMP path, with no way around it
     * when that switch is full (its streaming pool stalls instead); workers with no such switch go to the PS.
     */
    SWITCHML,
    /**
     * ATP: aggregation at the first programmable switch on the worker's ECMP path; what the switch cannot take
     * falls back to the PS on the same path.
     */
    ATP,
    /** GRID and InArt: any programmable switch on any candidate path, or the PS. */
    ROUTE_SELECTION;

    /** True for the schemes whose routes are fixed by ECMP hashing rather than chosen. */
    public boolean usesEcmp() {
        return this == SWITCHML || this == ATP;
    }
}
