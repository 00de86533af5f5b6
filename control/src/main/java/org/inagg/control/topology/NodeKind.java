package org.inagg.control.topology;

/** What a node of the topology does in distributed training. */
public enum NodeKind {
    /** Produces a gradient every iteration and receives the aggregated model back. */
    WORKER,
    /** Sums the gradients (or partial aggregates) it receives and distributes the model. */
    PARAMETER_SERVER,
    /** Forwards packets; a programmable one can also aggregate them. */
    SWITCH
}
