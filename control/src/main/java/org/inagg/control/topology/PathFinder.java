package org.inagg.control.topology;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Enumerates candidate routes. Data-centre fabrics have very many equal-cost paths (a k-ary fat-tree has (k/2)^2
 * between pods), so enumeration is bounded: simple paths at most {@code slack} hops longer than the shortest, at most
 * {@code limit} of them, with the neighbour order shuffled by a seed so that the paths kept are spread over the
 * fabric instead of all crossing the first core switch. Paths never transit a host.
 */
public final class PathFinder {

    private final Topology topology;

    public PathFinder(Topology topology) {
        this.topology = topology;
    }

    /** Hop distance from every node to {@code target}, walking only through switches. */
    public int[] hopsTo(int target) {
        int[] distance = new int[topology.nodeCount()];
        Arrays.fill(distance, Integer.MAX_VALUE);
        distance[target] = 0;
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        queue.add(target);
        while (!queue.isEmpty()) {
            int node = queue.poll();
            if (node != target && !topology.node(node).isSwitch()) {
                continue;
            }
            for (int arc : topology.arcsOut(node)) {
                int neighbour = topology.head(arc);
                if (distance[neighbour] == Integer.MAX_VALUE) {
                    distance[neighbour] = distance[node] + 1;
                    queue.add(neighbour);
                }
            }
        }
        return distance;
    }

    /**
     * Up to {@code limit} simple paths from {@code source} to {@code target} no more than {@code slack} hops longer
     * than the shortest, shortest first.
     */
    public List<Path> paths(int source, int target, int slack, int limit, long seed) {
        return paths(source, target, slack, limit, seed, hopsTo(target));
    }

    /** As {@link #paths(int, int, int, int, long)} with distances to the target already computed. */
    public List<Path> paths(int source, int target, int slack, int limit, long seed, int[] hopsToTarget) {
        if (hopsToTarget[source] == Integer.MAX_VALUE) {
            return List.of();
        }
        List<Path> found = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(seed);
        int shortest = hopsToTarget[source];
        for (int extra = 0; extra <= slack && found.size() < limit; extra++) {
            int budget = shortest + extra;
            boolean[] onPath = new boolean[topology.nodeCount()];
            onPath[source] = true;
            search(source, target, budget, new int[budget], 0, onPath, hopsToTarget, random, found, limit);
        }
        return found;
    }

    private void search(int node, int target, int exactLength, int[] arcs, int depth, boolean[] onPath,
                        int[] hopsToTarget, SplittableRandom random, List<Path> found, int limit) {
        if (found.size() >= limit) {
            return;
        }
        if (node == target) {
            if (depth == exactLength) {
                found.add(new Path(Arrays.copyOf(arcs, depth)));
            }
            return;
        }
        if (depth > 0 && !topology.node(node).isSwitch()) {
            return;
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
            if (onPath[next] || hopsToTarget[next] == Integer.MAX_VALUE
                || depth + 1 + hopsToTarget[next] > exactLength) {
                continue;
            }
            onPath[next] = true;
            arcs[depth] = arc;
            search(next, target, exactLength, arcs, depth + 1, onPath, hopsToTarget, random, found, limit);
            onPath[next] = false;
            if (found.size() >= limit) {
                return;
            }
        }
    }
}
