package org.inagg.control.esa;

/** How aggregators are handed to jobs. */
public enum AllocationPolicy {
    /** SwitchML: each job owns an equal, fixed share of the slots; a chunk waits for one of its own. */
    STATIC_PARTITION,
    /**
     * ATP: one shared pool, first come first served; a chunk that finds no free slot falls back to the PS (when the
     * PS is not already backlogged); a slot is freed only when the PS's acknowledgement comes back, one round trip
     * after the aggregate left.
     */
    DEALLOCATE_ON_ACK,
    /**
     * ESA: one shared pool; a slot is reusable as soon as its aggregate leaves (preemption makes the
     * acknowledgement unnecessary), and a chunk of a higher-priority job (fewer chunks left, i.e. shortest
     * remaining first) that finds no free slot preempts the lowest-priority chunk still aggregating, whose partial
     * sum and remaining packets go to its PS.
     */
    PREEMPTIVE_PRIORITY
}
