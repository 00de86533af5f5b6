package org.inagg.perf.lab;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.inagg.control.topology.Topology;

/**
 * The addresses and routes of a {@link TopologyFabric}, as {@code ip} command lines: pure functions of the topology
 * (tested without root). Only switches forward; between two nodes a path of fewest hops, ties broken by the lower
 * link index, so the routes are the same on every run.
 */
final class FabricRoutes
{
    private final Topology topology;

    FabricRoutes(final Topology topology)
    {
        this.topology = topology;
    }

    /** Node i's address: 10.1.hh.ll of i + 1. */
    static String nodeAddress(final int node)
    {
        return "10.1." + ((node + 1) >> 8) + "." + ((node + 1) & 0xFF);
    }

    /** Switch i's aggregation unit's address: 10.2.hh.ll of i + 1. */
    static String aggregatorAddress(final int node)
    {
        return "10.2." + ((node + 1) >> 8) + "." + ((node + 1) & 0xFF);
    }

    /** Arc n's end (link n / 2; even: at a, odd: at b): 10.3.x.y, a /31 per link. */
    static String linkAddress(final int arcEnd)
    {
        return "10.3." + (arcEnd >> 8) + "." + (arcEnd & 0xFF);
    }

    /** The /31 between switch i and its aggregation unit: 10.4.x.y (the unit's end, or the switch's). */
    static String aggregatorLinkAddress(final int node, final boolean unitEnd)
    {
        final int end = 2 * node + (unitEnd ? 0 : 1);
        return "10.4." + (end >> 8) + "." + (end & 0xFF);
    }

    /** Hops from every node to {@code target} through switches only ({@code Integer.MAX_VALUE}: never). */
    int[] hopsTo(final int target)
    {
        final int[] hops = new int[topology.nodeCount()];
        Arrays.fill(hops, Integer.MAX_VALUE);
        hops[target] = 0;
        final ArrayDeque<Integer> queue = new ArrayDeque<>(List.of(target));
        while (!queue.isEmpty())
        {
            final int node = queue.poll();
            if (node != target && !topology.node(node).isSwitch())
            {
                continue;
            }
            for (final int arc : topology.arcsOut(node))
            {
                final int next = topology.head(arc);
                if (hops[next] == Integer.MAX_VALUE)
                {
                    hops[next] = hops[node] + 1;
                    queue.add(next);
                }
            }
        }
        return hops;
    }

    /** For a path of fewest hops from {@code source} to every node: the arc it leaves {@code source} on (-1: none). */
    int[] firstArcs(final int source)
    {
        final int[] first = new int[topology.nodeCount()];
        Arrays.fill(first, -1);
        final boolean[] seen = new boolean[topology.nodeCount()];
        seen[source] = true;
        final ArrayDeque<Integer> queue = new ArrayDeque<>(List.of(source));
        while (!queue.isEmpty())
        {
            final int node = queue.poll();
            if (node != source && !topology.node(node).isSwitch())
            {
                continue;
            }
            for (final int arc : topology.arcsOut(node)) // port order: the file's link order
            {
                final int next = topology.head(arc);
                if (!seen[next])
                {
                    seen[next] = true;
                    first[next] = node == source ? arc : first[node];
                    queue.add(next);
                }
            }
        }
        return first;
    }

    /** Every worker reaches every parameter server and every other worker, else an error naming a pair that cannot. */
    void requireConnected()
    {
        final Set<Integer> hosts = new HashSet<>();
        for (final int w : topology.workers())
        {
            hosts.add(w);
        }
        for (final int p : topology.parameterServers())
        {
            hosts.add(p);
        }
        for (final int w : topology.workers())
        {
            final int[] first = firstArcs(w);
            for (final int other : hosts)
            {
                if (other != w && first[other] < 0)
                {
                    throw new IllegalArgumentException("topology " + topology.name() + ": " + topology.node(w).id()
                        + " cannot reach " + topology.node(other).id() + " through switches");
                }
            }
        }
    }

    /** {@code route add} lines of node i: every other node's and every aggregation unit's address. */
    List<String> routesOf(final int node)
    {
        final int[] first = firstArcs(node);
        final List<String> lines = new ArrayList<>();
        for (int other = 0; other < topology.nodeCount(); other++)
        {
            final boolean unit = topology.node(other).isProgrammable();
            if (other == node)
            {
                if (unit)
                {
                    lines.add("route add " + aggregatorAddress(node) + "/32 via " + aggregatorLinkAddress(node, true)
                        + " dev agg src " + nodeAddress(node));
                }
                continue;
            }
            if (first[other] < 0)
            {
                continue;
            }
            final String via = hop(first[other]) + " src " + nodeAddress(node);
            lines.add("route add " + nodeAddress(other) + "/32 " + via);
            if (unit)
            {
                lines.add("route add " + aggregatorAddress(other) + "/32 " + via);
            }
        }
        return lines;
    }

    /** {@code via NEXT dev lK} for leaving on {@code arc}. */
    private static String hop(final int arc)
    {
        return "via " + linkAddress(arc ^ 1) + " dev l" + (arc >> 1);
    }

    /**
     * A flow pinned to {@code path} (node ids, source's node first): for every node of it but the last, the
     * {@code via NEXT dev lK} it leaves on.
     *
     * @throws IllegalArgumentException naming an unknown node, a node twice, or two nodes no link joins.
     */
    Map<Integer, String> pin(final List<String> path)
    {
        if (path.size() < 2)
        {
            throw new IllegalArgumentException("a path needs two nodes at least, not " + path);
        }
        final Map<Integer, String> hops = new LinkedHashMap<>();
        for (int j = 0; j + 1 < path.size(); j++)
        {
            final int from = index(path.get(j), path);
            final int to = index(path.get(j + 1), path);
            final int arc = topology.arcBetween(from, to);
            if (arc < 0)
            {
                throw new IllegalArgumentException("path " + path + ": no link joins " + path.get(j) + " and "
                    + path.get(j + 1) + " in topology " + topology.name());
            }
            if (j > 0 && !topology.node(from).isSwitch())
            {
                throw new IllegalArgumentException("path " + path + " passes through " + path.get(j)
                    + ", which is not a switch");
            }
            if (hops.put(from, hop(arc)) != null)
            {
                throw new IllegalArgumentException("path " + path + " visits " + path.get(j) + " twice");
            }
        }
        return hops;
    }

    private int index(final String id, final List<String> path)
    {
        if (!topology.contains(id))
        {
            throw new IllegalArgumentException("path " + path + " names unknown node '" + id + "' (topology "
                + topology.name() + ")");
        }
        return topology.index(id);
    }
}
