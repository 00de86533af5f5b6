package org.inagg.control.multicast;

import org.inagg.control.topology.Topology;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Random;
import java.util.Set;

/**
 * The baseline: a shortest-path tree from the source with ties broken at random and no reservation, as a
 * hash-based multicast would build it. Breadth-first search with shuffled neighbour order, so in a spine-leaf the
 * whole tree goes through one random spine.
 */
public final class RandomMulticast {

    private RandomMulticast() {
    }

    /**
     * A tree whose branches are drawn independently: each receiver joins by its own random shortest path (as
     * per-destination ECMP would send unicast copies), merged where they overlap.
     */
    public static MulticastTree buildPerReceiver(Topology topology, int source, int[] receivers, Random random) {
        Set<Integer> arcs = new LinkedHashSet<>();
        for (int receiver : receivers) {
            for (int arc : build(topology, source, new int[] {receiver}, random).arcs()) {
                arcs.add(arc);
            }
        }
        return new MulticastTree(source, receivers, arcs.stream().mapToInt(Integer::intValue).toArray());
    }

    public static MulticastTree build(Topology topology, int source, int[] receivers, Random random) {
        int n = topology.nodeCount();
        int[] via = new int[n];
        Arrays.fill(via, -1);
        boolean[] seen = new boolean[n];
        seen[source] = true;
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        queue.add(source);
        while (!queue.isEmpty()) {
            int node = queue.poll();
            if (node != source && !topology.node(node).isSwitch()) {
                continue;
            }
            int[] out = topology.arcsOut(node).clone();
            for (int i = out.length - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int swap = out[i];
                out[i] = out[j];
                out[j] = swap;
            }
            for (int arc : out) {
                int next = topology.head(arc);
                if (!seen[next]) {
                    seen[next] = true;
                    via[next] = arc;
                    queue.add(next);
                }
            }
        }
        Set<Integer> arcs = new LinkedHashSet<>();
        for (int receiver : receivers) {
            int node = receiver;
            while (node != source) {
                int arc = via[node];
                if (arc < 0) {
                    throw new IllegalArgumentException("receiver " + topology.node(receiver).id() + " unreachable");
                }
                arcs.add(arc);
                node = topology.tail(arc);
            }
        }
        return new MulticastTree(source, receivers, arcs.stream().mapToInt(Integer::intValue).toArray());
    }
}
