package org.inagg.control.multicast;

import org.inagg.control.topology.Topology;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Finds and reserves a tree with the bandwidth a round needs. Receivers join one at a time by a cheapest path from
 * the tree built so far: arcs already in the tree cost nothing (the copy is shared), other arcs cost a hop plus
 * their current reserved share, and arcs without {@code demandGbps} left are unusable. So the tree reuses its own
 * branches, then prefers the least reserved of equally short detours: that is what spreads trees over spines.
 */
public final class PathAwareMulticast {

    /** How much a fully reserved link costs beyond its hop; 1 keeps trees short, larger spreads them more. */
    public static final double DEFAULT_LOAD_WEIGHT = 1;

    private final LinkReservations reservations;
    private final double loadWeight;

    public PathAwareMulticast(LinkReservations reservations) {
        this(reservations, DEFAULT_LOAD_WEIGHT);
    }

    public PathAwareMulticast(LinkReservations reservations, double loadWeight) {
        this.reservations = reservations;
        this.loadWeight = loadWeight;
    }

    /** A reserved tree, or null when no tree with {@code demandGbps} on every link exists now. */
    public MulticastTree reserve(int source, int[] receivers, double demandGbps) {
        MulticastTree tree = find(source, receivers, demandGbps, true);
        if (tree != null) {
            reservations.reserve(tree, demandGbps);
        }
        return tree;
    }

    /**
     * The least-loaded tree ignoring whether bandwidth is left (what a sender does when reservation fails and it
     * goes best-effort); reserves it too, so later trees avoid it.
     */
    public MulticastTree reserveBestEffort(int source, int[] receivers, double demandGbps) {
        MulticastTree tree = find(source, receivers, demandGbps, false);
        reservations.reserve(tree, demandGbps);
        return tree;
    }

    public void release(MulticastTree tree, double demandGbps) {
        reservations.release(tree, demandGbps);
    }

    private MulticastTree find(int source, int[] receivers, double demandGbps, boolean strict) {
        Topology topology = reservations.topology();
        int n = topology.nodeCount();
        boolean[] inTree = new boolean[n];
        inTree[source] = true;
        Set<Integer> treeArcs = new LinkedHashSet<>();
        for (int receiver : receivers) {
            if (inTree[receiver]) {
                continue;
            }
            double[] cost = new double[n];
            int[] via = new int[n];
            Arrays.fill(cost, Double.POSITIVE_INFINITY);
            Arrays.fill(via, -1);
            PriorityQueue<double[]> queue = new PriorityQueue<>((a, b) -> Double.compare(a[0], b[0]));
            for (int node = 0; node < n; node++) {
                if (inTree[node]) {
                    cost[node] = 0;
                    queue.add(new double[] {0, node});
                }
            }
            while (!queue.isEmpty()) {
                double[] top = queue.poll();
                int node = (int) top[1];
                if (top[0] > cost[node] || node == receiver) {
                    continue;
                }
                if (node != source && !topology.node(node).isSwitch()) {
                    continue;
                }
                for (int arc : topology.arcsOut(node)) {
                    int next = topology.head(arc);
                    if (!topology.node(next).isSwitch() && next != receiver) {
                        continue;
                    }
                    double residual = reservations.residualGbps(arc);
                    if (strict && residual < demandGbps - 1e-9) {
                        continue;
                    }
                    double capacity = topology.arcCapacityGbps(arc);
                    double step = 1 + loadWeight * reservations.reservedGbps(arc) / capacity;
                    if (cost[node] + step < cost[next]) {
                        cost[next] = cost[node] + step;
                        via[next] = arc;
                        queue.add(new double[] {cost[next], next});
                    }
                }
            }
            if (via[receiver] < 0) {
                return null;
            }
            int node = receiver;
            while (!inTree[node]) {
                int arc = via[node];
                treeArcs.add(arc);
                inTree[node] = true;
                node = topology.tail(arc);
            }
        }
        return new MulticastTree(source, receivers, treeArcs.stream().mapToInt(Integer::intValue).toArray());
    }
}
