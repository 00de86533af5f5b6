package org.inagg.control.multicast;

import org.inagg.control.topology.Topology;

import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A tree from a source host to receiver hosts, as the set of arcs it uses (each carries one copy).
 *
 * @param source     node index of the sender (a PS)
 * @param receivers  node indices of the receivers
 * @param arcs       arcs of the tree, each once
 */
public record MulticastTree(int source, int[] receivers, int[] arcs) {

    public MulticastTree {
        receivers = receivers.clone();
        arcs = arcs.clone();
    }

    /**
     * Per-hop forwarding state: for every node that forwards (the source host included), the set of its ports the
     * packet leaves on. This is what travels in the packet header (or is installed per round), so the network
     * holds no per-group state between rounds.
     */
    public Map<String, BitSet> portBitmaps(Topology topology) {
        Map<String, BitSet> bitmaps = new LinkedHashMap<>();
        for (int arc : arcs) {
            bitmaps.computeIfAbsent(topology.node(topology.tail(arc)).id(), k -> new BitSet())
                .set(topology.port(arc));
        }
        return bitmaps;
    }

    public boolean sharesArcWith(MulticastTree other) {
        for (int arc : arcs) {
            for (int otherArc : other.arcs) {
                if (arc == otherArc) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "MulticastTree[source=" + source + ", receivers=" + Arrays.toString(receivers) + ", arcs="
            + Arrays.toString(arcs) + "]";
    }
}
