package org.inagg.control.multicast;

import org.inagg.control.topology.Topology;

/** Bandwidth reserved on each arc by the trees currently held; what the network tracks for path-aware multicast. */
public final class LinkReservations {

    private final Topology topology;
    private final double[] reserved;

    public LinkReservations(Topology topology) {
        this.topology = topology;
        this.reserved = new double[topology.arcCount()];
    }

    public double residualGbps(int arc) {
        return topology.arcCapacityGbps(arc) - reserved[arc];
    }

    public double reservedGbps(int arc) {
        return reserved[arc];
    }

    /** Reserves {@code gbps} on every arc of the tree (no check: {@link PathAwareMulticast} checks). */
    public void reserve(MulticastTree tree, double gbps) {
        for (int arc : tree.arcs()) {
            reserved[arc] += gbps;
        }
    }

    /** Releases what {@link #reserve} took, once the round is over. */
    public void release(MulticastTree tree, double gbps) {
        for (int arc : tree.arcs()) {
            reserved[arc] = Math.max(0, reserved[arc] - gbps);
        }
    }

    public Topology topology() {
        return topology;
    }
}
