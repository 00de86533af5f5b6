package org.inagg.control.topology;

import java.util.Objects;

/**
 * One node of a topology.
 *
 * @param id                      unique name, used in files and plans
 * @param kind                    worker, parameter server or switch
 * @param aggregationCapacityGbps for a switch: how many Gb/s of gradient input it can sum (0 = not programmable);
 *                                ignored otherwise
 * @param aggregatorSlots         for a switch: how many aggregators (memory slots) it has; ignored otherwise
 * @param ingressGbps             for a parameter server: the most it can receive, in Gb/s
 *                                ({@link Double#POSITIVE_INFINITY} = only its links limit it); ignored otherwise
 */
public record Node(String id, NodeKind kind, double aggregationCapacityGbps, long aggregatorSlots, double ingressGbps) {

    public Node {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        if (id.isBlank()) {
            throw new IllegalArgumentException("node id must not be blank");
        }
        if (aggregationCapacityGbps < 0 || aggregatorSlots < 0 || !(ingressGbps > 0)) {
            throw new IllegalArgumentException("node " + id + ": capacities must be non-negative, ingress positive");
        }
    }

    public static Node worker(String id) {
        return new Node(id, NodeKind.WORKER, 0, 0, Double.POSITIVE_INFINITY);
    }

    public static Node parameterServer(String id, double ingressGbps) {
        return new Node(id, NodeKind.PARAMETER_SERVER, 0, 0, ingressGbps);
    }

    public static Node plainSwitch(String id) {
        return new Node(id, NodeKind.SWITCH, 0, 0, Double.POSITIVE_INFINITY);
    }

    public static Node programmableSwitch(String id, double aggregationCapacityGbps, long aggregatorSlots) {
        return new Node(id, NodeKind.SWITCH, aggregationCapacityGbps, aggregatorSlots, Double.POSITIVE_INFINITY);
    }

    /** True for a switch that can sum gradients. */
    public boolean isProgrammable() {
        return kind == NodeKind.SWITCH && aggregationCapacityGbps > 0;
    }

    public boolean isWorker() {
        return kind == NodeKind.WORKER;
    }

    public boolean isParameterServer() {
        return kind == NodeKind.PARAMETER_SERVER;
    }

    public boolean isSwitch() {
        return kind == NodeKind.SWITCH;
    }
}
