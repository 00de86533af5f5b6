package org.inagg.control.multicast;

import org.inagg.control.sim.FlowSimulator;
import org.inagg.control.sim.FlowUnit;
import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * The experiments of the path-aware multicast paper on an 8x8 spine-leaf (8 spines, 8 leaves, 8 hosts per leaf,
 * 100 Gb/s links), timed with the flow-level simulator.
 */
public final class MulticastScenarios {

    public static final double LINK_GBPS = 100;

    private MulticastScenarios() {
    }

    /** 8 spines, 8 leaves, 8 hosts per leaf; PS{i} sits on the last host of leaf 7-i, workers fill the rest. */
    public static Topology spineLeaf8x8(int parameterServers) {
        FabricSpec spec = new FabricSpec(LINK_GBPS, LINK_GBPS, 0, 0, 0, LINK_GBPS, 0, 1);
        return Topologies.spineLeaf(8, 8, 8, 64 - parameterServers, parameterServers, spec);
    }

    /** Node index of the {@code slot}-th host of {@code leaf} (counting workers and PSs). */
    static int host(Topology topology, int leaf, int slot) {
        int accessLeaf = topology.index("leaf" + leaf);
        int seen = 0;
        for (int arc : topology.arcsOut(accessLeaf)) {
            int node = topology.head(arc);
            if (!topology.node(node).isSwitch()) {
                if (seen == slot) {
                    return node;
                }
                seen++;
            }
        }
        throw new IllegalArgumentException("leaf" + leaf + " has no host " + slot);
    }

    /** Seconds to send {@code gigabits} to each receiver by unicast, each copy on a random shortest path. */
    public static double unicastSeconds(Topology topology, int source, int[] receivers, double gigabits,
                                        Random random) {
        List<FlowUnit> units = new ArrayList<>();
        for (int receiver : receivers) {
            MulticastTree path = RandomMulticast.build(topology, source, new int[] {receiver}, random);
            units.add(unit("unicast", path, gigabits));
        }
        return FlowSimulator.makespan(capacities(topology), units);
    }

    /** Seconds until every tree has delivered {@code gigabits}, trees sharing links max-min fairly. */
    public static double multicastSeconds(Topology topology, List<MulticastTree> trees, double gigabits) {
        List<FlowUnit> units = new ArrayList<>();
        for (MulticastTree tree : trees) {
            units.add(unit("tree", tree, gigabits));
        }
        return FlowSimulator.makespan(capacities(topology), units);
    }

    private static FlowUnit unit(String name, MulticastTree tree, double gigabits) {
        double[] ones = new double[tree.arcs().length];
        java.util.Arrays.fill(ones, 1);
        return new FlowUnit(name, tree.arcs(), ones, gigabits);
    }

    private static double[] capacities(Topology topology) {
        double[] capacity = new double[topology.arcCount()];
        for (int arc = 0; arc < capacity.length; arc++) {
            capacity[arc] = topology.arcCapacityGbps(arc);
        }
        return capacity;
    }

    /** One PS on leaf 7 sending to one worker on each of leaves 0-6: unicast time over multicast time. */
    public static double singleSenderSpeedup(double gigabits) {
        Topology topology = spineLeaf8x8(1);
        int source = topology.index("PS0");
        int[] receivers = new int[7];
        for (int leaf = 0; leaf < 7; leaf++) {
            receivers[leaf] = host(topology, leaf, 0);
        }
        double unicast = unicastSeconds(topology, source, receivers, gigabits, new Random(1));
        MulticastTree tree = new PathAwareMulticast(new LinkReservations(topology))
            .reserve(source, receivers, LINK_GBPS);
        double multicast = multicastSeconds(topology, List.of(tree), gigabits);
        return unicast / multicast;
    }

    /**
     * Two PSs (leaves 7 and 6) each sending to one worker on each of leaves 0-5. Random trees are drawn from seeds
     * 1, 2, ... until the two collide on a spine, the case the paper describes; path-aware trees each reserve the
     * full link rate, so the second avoids the first. Returns {random seconds, path-aware seconds}.
     */
    public static double[] collidingSenders(double gigabits) {
        Topology topology = spineLeaf8x8(2);
        int[] sources = {topology.index("PS0"), topology.index("PS1")};
        int[][] receivers = new int[2][6];
        for (int leaf = 0; leaf < 6; leaf++) {
            receivers[0][leaf] = host(topology, leaf, 0);
            receivers[1][leaf] = host(topology, leaf, 1);
        }
        List<MulticastTree> random = null;
        for (long seed = 1; random == null; seed++) {
            Random draw = new Random(seed);
            MulticastTree first = RandomMulticast.build(topology, sources[0], receivers[0], draw);
            MulticastTree second = RandomMulticast.build(topology, sources[1], receivers[1], draw);
            if (first.sharesArcWith(second)) {
                random = List.of(first, second);
            }
        }
        PathAwareMulticast planner = new PathAwareMulticast(new LinkReservations(topology));
        List<MulticastTree> reserved = List.of(planner.reserve(sources[0], receivers[0], LINK_GBPS),
            planner.reserve(sources[1], receivers[1], LINK_GBPS));
        return new double[] {multicastSeconds(topology, random, gigabits),
            multicastSeconds(topology, reserved, gigabits)};
    }

    /**
     * Many jobs at once on the 8x8 fabric: each job's PS and its {@code receiversPerJob} workers are random hosts
     * on distinct leaves; every tree needs {@code demandGbps}. Returns the coefficient of variation of the load on
     * leaf-spine links, {random, path-aware}. Path-aware trees that cannot be reserved go best-effort on the least
     * loaded tree.
     */
    public static double[] loadBalance(int jobs, int receiversPerJob, double demandGbps, long seed) {
        return loadBalance(jobs, receiversPerJob, demandGbps, seed, PathAwareMulticast.DEFAULT_LOAD_WEIGHT);
    }

    /** As {@link #loadBalance(int, int, double, long)} with the tree cost's load weight given. */
    public static double[] loadBalance(int jobs, int receiversPerJob, double demandGbps, long seed,
                                       double loadWeight) {
        return loadBalance(spineLeaf8x8(0), jobs, receiversPerJob, demandGbps, seed, loadWeight);
    }

    /**
     * The same experiment on any spine-leaf built by {@link Topologies#spineLeaf} (leaves named {@code leaf<i>}),
     * for the scale study. {@code receiversPerJob} must be below the number of leaves.
     */
    public static double[] loadBalance(Topology topology, int jobs, int receiversPerJob, double demandGbps,
                                       long seed, double loadWeight) {
        return loadBalance(topology, jobs, receiversPerJob, demandGbps, seed, loadWeight, false);
    }

    /**
     * @param perReceiverRandom  the random baseline draws each receiver's branch independently
     *                           ({@link RandomMulticast#buildPerReceiver}) instead of one random spine per tree
     */
    public static double[] loadBalance(Topology topology, int jobs, int receiversPerJob, double demandGbps,
                                       long seed, double loadWeight, boolean perReceiverRandom) {
        int leafCount = 0;
        while (topology.contains("leaf" + leafCount)) {
            leafCount++;
        }
        int[] hostsPerLeaf = new int[leafCount];
        for (int leaf = 0; leaf < leafCount; leaf++) {
            for (int arc : topology.arcsOut(topology.index("leaf" + leaf))) {
                hostsPerLeaf[leaf] += topology.node(topology.head(arc)).isSwitch() ? 0 : 1;
            }
        }
        if (receiversPerJob >= leafCount) {
            throw new IllegalArgumentException("need more leaves than receivers per job");
        }
        Random random = new Random(seed);
        List<int[]> sources = new ArrayList<>();
        List<int[]> receivers = new ArrayList<>();
        List<Integer> leaves = new ArrayList<>();
        for (int leaf = 0; leaf < leafCount; leaf++) {
            if (hostsPerLeaf[leaf] > 0) {
                leaves.add(leaf);
            }
        }
        leafCount = leaves.size();
        if (receiversPerJob >= leafCount) {
            throw new IllegalArgumentException("need more leaves with hosts than receivers per job");
        }
        for (int job = 0; job < jobs; job++) {
            // a partial shuffle: the first receiversPerJob + 1 leaves, distinct
            for (int i = 0; i <= receiversPerJob; i++) {
                Collections.swap(leaves, i, i + random.nextInt(leafCount - i));
            }
            int sourceLeaf = leaves.get(0);
            sources.add(new int[] {host(topology, sourceLeaf, random.nextInt(hostsPerLeaf[sourceLeaf]))});
            int[] group = new int[receiversPerJob];
            for (int r = 0; r < receiversPerJob; r++) {
                int leaf = leaves.get(1 + r);
                group[r] = host(topology, leaf, random.nextInt(hostsPerLeaf[leaf]));
            }
            receivers.add(group);
        }
        double[] randomLoad = new double[topology.arcCount()];
        Random treeRandom = new Random(seed + 1);
        for (int job = 0; job < jobs; job++) {
            MulticastTree tree = perReceiverRandom
                ? RandomMulticast.buildPerReceiver(topology, sources.get(job)[0], receivers.get(job), treeRandom)
                : RandomMulticast.build(topology, sources.get(job)[0], receivers.get(job), treeRandom);
            for (int arc : tree.arcs()) {
                randomLoad[arc] += demandGbps;
            }
        }
        LinkReservations reservations = new LinkReservations(topology);
        PathAwareMulticast planner = new PathAwareMulticast(reservations, loadWeight);
        for (int job = 0; job < jobs; job++) {
            if (planner.reserve(sources.get(job)[0], receivers.get(job), demandGbps) == null) {
                planner.reserveBestEffort(sources.get(job)[0], receivers.get(job), demandGbps);
            }
        }
        double[] pathAwareLoad = new double[topology.arcCount()];
        for (int arc = 0; arc < pathAwareLoad.length; arc++) {
            pathAwareLoad[arc] = reservations.reservedGbps(arc);
        }
        return new double[] {fabricVariation(topology, randomLoad), fabricVariation(topology, pathAwareLoad)};
    }

    /** Coefficient of variation (standard deviation over mean) of the load on switch-to-switch arcs. */
    static double fabricVariation(Topology topology, double[] load) {
        double sum = 0;
        double squares = 0;
        int count = 0;
        for (int arc = 0; arc < load.length; arc++) {
            if (topology.node(topology.tail(arc)).isSwitch() && topology.node(topology.head(arc)).isSwitch()) {
                sum += load[arc];
                squares += load[arc] * load[arc];
                count++;
            }
        }
        double mean = sum / count;
        double variance = Math.max(0, squares / count - mean * mean);
        return mean == 0 ? 0 : Math.sqrt(variance) / mean;
    }
}
