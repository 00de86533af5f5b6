package org.inagg.control.passing;

/** Ways to synchronise a gradient across multi-GPU hosts. */
public enum SyncStrategy {
    /** One ring over all GPUs; each host's NIC carries the ring's traffic in and out. */
    FLAT_RING,
    /** Reduce-scatter inside the host, ring all-reduce across hosts, all-gather inside the host. */
    HIERARCHICAL_RING,
    /** Every GPU sends its whole gradient to the switch through the host's shared NIC. */
    PER_GPU_INA,
    /** PASSING: reduce-scatter inside the host, in-network aggregation of the host's sum, all-gather inside. */
    PASSING
}
