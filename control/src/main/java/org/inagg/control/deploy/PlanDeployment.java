package org.inagg.control.deploy;

import org.inagg.control.plan.InaPlan;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.Topology;
import org.inagg.p4.control.InaggP4;
import org.inagg.p4.control.JobSpec;
import org.inagg.p4.control.JobTable;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.p4.control.WorkerEndpoint;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.p4.softswitch.UpstreamAggregation;
import org.inagg.wire.InaggHeader;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A plan ({@link InaPlan}, file schema {@code inagg-plan/1}) turned into the configuration the datapath runs: switch
 * job tables with two-level aggregation, parameter-server jobs and each worker's shards.
 * <pre>
 *   plan                                   datapath
 *   split {PS_j: s_j}                 ->   one job per PS (id 1 + j), a {@link org.inagg.api.ShardedAllReduce}
 *                                          shard of fraction s_j on every worker
 *   switchJobTables[S][row]           ->   S: SwitchJobConfig(job of row.ps, W workers) + UpstreamAggregation(PS,
 *                                          row.contributors, results down the tree); rows of one PS at one switch
 *                                          are merged
 *   workers[w].shares[j].aggregateAt  ->   worker w's job j sends to that switch, or straight to PS_j
 *   PS_j                              ->   ParameterServer job (W workers; answers the JOINs of direct workers)
 * </pre>
 * Worker ids are the workers' positions in the plan ({@code 0..W-1}); every PS job counts all W workers, so the
 * fixed-point headroom is the flat all-reduce's and the result is bit-identical to it. The plan's {@code group} ids
 * and paths are the fabric's business (which switch a packet passes); here each worker's packets go straight to
 * the node that aggregates them, and the switch's partial straight to its PS.
 * <p>
 * Peers: every node and every (worker, shard) endpoint gets a transport peer number ({@link #peers()} in all),
 * switches first, then PSs, then workers' endpoints; a worker has one endpoint per shard (one socket per job).
 */
public final class PlanDeployment {

    /** Slots (window) and lanes per packet of every job, and the worker timeouts. */
    public record Settings(int slots, int lanesPerPacket) {
        public static final Settings DEFAULT = new Settings(64, SwitchJobConfig.DEFAULT_LANES);

        public Settings {
            if (slots < 1 || slots >= InaggHeader.MAX_SLOTS) {
                throw new IllegalArgumentException("slots must be in 1.." + (InaggHeader.MAX_SLOTS - 1) + ", got "
                    + slots);
            }
            if (lanesPerPacket < 1 || lanesPerPacket > InaggHeader.MAX_ELEMENTS_FOR_1500_MTU) {
                throw new IllegalArgumentException("lanes per packet must be in 1.."
                    + InaggHeader.MAX_ELEMENTS_FOR_1500_MTU + ", got " + lanesPerPacket);
            }
        }
    }

    /** One PS's job: its id and share of the model. */
    public record Shard(String ps, int jobId, double share) {
    }

    /** One row of a software switch's job table. */
    public record SwitchRow(SwitchJobConfig config, UpstreamAggregation upstream) {
    }

    /** Where worker {@code worker}'s shard {@code shard} is sent, and from which peer. */
    public record WorkerShard(int worker, int shard, int jobId, int peer, int sendTo, String aggregateAt) {
    }

    private final InaPlan plan;
    private final Settings settings;
    private final List<String> workers;
    private final List<Shard> shards;
    private final Map<String, Integer> switchPeers;
    private final Map<String, Integer> serverPeers;
    private final Map<String, List<SwitchRow>> switchRows;
    private final Map<String, ServerJobConfig> serverJobs;
    private final List<List<WorkerShard>> workerShards;

    private PlanDeployment(InaPlan plan, Settings settings) {
        this.plan = plan;
        this.settings = settings;
        if (!PlanJson.SCHEMA.equals(plan.schema())) {
            throw new IllegalArgumentException("plan schema is '" + plan.schema() + "', expected '" + PlanJson.SCHEMA
                + "'");
        }
        workers = new ArrayList<>();
        Map<String, Integer> workerIndex = new HashMap<>();
        for (InaPlan.WorkerRoute route : plan.workers()) {
            if (workerIndex.putIfAbsent(route.worker(), workers.size()) != null) {
                throw new IllegalArgumentException("plan lists worker '" + route.worker() + "' twice");
            }
            workers.add(route.worker());
        }
        int w = workers.size();
        if (w < 1 || w > org.inagg.fixedpoint.FixedPoint.MAX_WORKERS) {
            throw new IllegalArgumentException("plan has " + w + " workers; a job takes 1.."
                + org.inagg.fixedpoint.FixedPoint.MAX_WORKERS);
        }

        shards = new ArrayList<>();
        Map<String, Integer> shardOf = new HashMap<>();
        for (Map.Entry<String, Double> e : plan.split().entrySet()) {
            if (!(e.getValue() >= 0) || e.getValue().isInfinite()) {
                throw new IllegalArgumentException("PS '" + e.getKey() + "' has share " + e.getValue());
            }
            if (e.getValue() > 0) {
                shardOf.put(e.getKey(), shards.size());
                shards.add(new Shard(e.getKey(), 1 + shards.size(), e.getValue()));
            }
        }
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("plan's split gives no PS a positive share: " + plan.split());
        }

        // Peers: switches (sorted by id), PSs (shard order), then each worker's endpoint per shard.
        switchPeers = new LinkedHashMap<>();
        for (String sw : new TreeMap<>(plan.switchJobTables()).keySet()) {
            switchPeers.put(sw, switchPeers.size());
        }
        serverPeers = new LinkedHashMap<>();
        for (Shard shard : shards) {
            serverPeers.put(shard.ps(), switchPeers.size() + serverPeers.size());
        }

        // Switch tables: rows of one PS merged per switch.
        Map<String, Map<Integer, List<Integer>>> locals = new LinkedHashMap<>();
        for (Map.Entry<String, List<InaPlan.SwitchJobEntry>> table : new TreeMap<>(plan.switchJobTables()).entrySet()) {
            Map<Integer, List<Integer>> byShard = new TreeMap<>();
            for (InaPlan.SwitchJobEntry row : table.getValue()) {
                Integer shard = shardOf.get(row.ps());
                if (shard == null) {
                    throw new IllegalArgumentException("switch '" + table.getKey() + "' job " + row.jobId()
                        + " sends to PS '" + row.ps() + "', which has no share in the plan's split " + plan.split());
                }
                if (row.contributors().size() != row.expectedContributors()) {
                    throw new IllegalArgumentException("switch '" + table.getKey() + "' job " + row.jobId()
                        + " expects " + row.expectedContributors() + " contributors but lists "
                        + row.contributors().size());
                }
                for (String contributor : row.contributors()) {
                    Integer index = workerIndex.get(contributor);
                    if (index == null) {
                        throw new IllegalArgumentException("switch '" + table.getKey() + "' job " + row.jobId()
                            + " lists contributor '" + contributor + "', which is not a worker of the plan");
                    }
                    byShard.computeIfAbsent(shard, k -> new ArrayList<>()).add(index);
                }
            }
            locals.put(table.getKey(), byShard);
        }

        // Every worker: each positive share aggregated exactly once, where its route says.
        workerShards = new ArrayList<>();
        int[][] endpoint = new int[w][shards.size()];
        int next = switchPeers.size() + serverPeers.size();
        for (int i = 0; i < w; i++) {
            for (int j = 0; j < shards.size(); j++) {
                endpoint[i][j] = next++;
            }
        }
        for (int i = 0; i < w; i++) {
            InaPlan.WorkerRoute route = plan.workers().get(i);
            WorkerShard[] mine = new WorkerShard[shards.size()];
            for (InaPlan.Share share : route.shares()) {
                Integer j = shardOf.get(share.ps());
                if (j == null) {
                    continue;       // a PS with no share of the model
                }
                if (mine[j] != null) {
                    throw new IllegalArgumentException("worker '" + route.worker() + "' has two shares for PS '"
                        + share.ps() + "'");
                }
                int sendTo;
                if (share.aggregateAt().equals(share.ps())) {
                    sendTo = serverPeers.get(share.ps());
                } else {
                    Integer sw = switchPeers.get(share.aggregateAt());
                    List<Integer> served = sw == null ? null : locals.get(share.aggregateAt()).get(j);
                    if (served == null || !served.contains(i)) {
                        throw new IllegalArgumentException("worker '" + route.worker() + "' is aggregated at '"
                            + share.aggregateAt() + "' for PS '" + share.ps() + "', but that switch's job table has"
                            + " no row for it");
                    }
                    sendTo = sw;
                }
                mine[j] = new WorkerShard(i, j, shards.get(j).jobId(), endpoint[i][j], sendTo, share.aggregateAt());
            }
            for (int j = 0; j < shards.size(); j++) {
                if (mine[j] == null) {
                    throw new IllegalArgumentException("worker '" + route.worker() + "' has no route to PS '"
                        + shards.get(j).ps() + "'");
                }
            }
            workerShards.add(List.of(mine));
        }
        for (Map.Entry<String, Map<Integer, List<Integer>>> table : locals.entrySet()) {
            for (Map.Entry<Integer, List<Integer>> row : table.getValue().entrySet()) {
                for (int i : row.getValue()) {
                    if (workerShards.get(i).get(row.getKey()).sendTo() != switchPeers.get(table.getKey())) {
                        throw new IllegalArgumentException("switch '" + table.getKey() + "' expects worker '"
                            + workers.get(i) + "' for PS '" + shards.get(row.getKey()).ps() + "', but the worker's"
                            + " route aggregates it at '" + workerShards.get(i).get(row.getKey()).aggregateAt() + "'");
                    }
                }
            }
        }

        switchRows = new LinkedHashMap<>();
        for (Map.Entry<String, Map<Integer, List<Integer>>> table : locals.entrySet()) {
            List<SwitchRow> rows = new ArrayList<>();
            for (Map.Entry<Integer, List<Integer>> row : table.getValue().entrySet()) {
                int j = row.getKey();
                rows.add(new SwitchRow(
                    new SwitchJobConfig(shards.get(j).jobId(), w, settings.slots(), settings.lanesPerPacket(),
                        SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP, endpoints(j)),
                    new UpstreamAggregation(serverPeers.get(shards.get(j).ps()),
                        row.getValue().stream().mapToInt(Integer::intValue).toArray(), true)));
            }
            switchRows.put(table.getKey(), List.copyOf(rows));
        }
        serverJobs = new LinkedHashMap<>();
        for (int j = 0; j < shards.size(); j++) {
            serverJobs.put(shards.get(j).ps(), new ServerJobConfig(shards.get(j).jobId(), w, endpoints(j), 0, false,
                settings.slots(), settings.lanesPerPacket()));
        }
    }

    /**
     * @throws IllegalArgumentException naming what is inconsistent: an unknown schema, worker, PS or switch, a worker
     *                                  aggregated nowhere or twice for a PS, a switch row the worker's route disagrees
     *                                  with, counts that do not match.
     */
    public static PlanDeployment of(InaPlan plan, Settings settings) {
        return new PlanDeployment(plan, settings);
    }

    private int[] endpoints(int shard) {
        int[] peers = new int[workers.size()];
        for (int i = 0; i < peers.length; i++) {
            peers[i] = workerShards.get(i).get(shard).peer();
        }
        return peers;
    }

    public InaPlan plan() {
        return plan;
    }

    public Settings settings() {
        return settings;
    }

    /** Worker ids of the plan; a worker's position is its worker id in every job. */
    public List<String> workers() {
        return List.copyOf(workers);
    }

    /** One shard per PS with a positive share, in the plan's split order. */
    public List<Shard> shards() {
        return List.copyOf(shards);
    }

    /** Each shard's share, in shard order (for {@link org.inagg.api.ShardedAllReduce}). */
    public double[] shares() {
        return shards.stream().mapToDouble(Shard::share).toArray();
    }

    /** Switches that aggregate anything, with their transport peers. */
    public Map<String, Integer> switchPeers() {
        return Map.copyOf(switchPeers);
    }

    /** Parameter servers with a share, with their transport peers. */
    public Map<String, Integer> serverPeers() {
        return Map.copyOf(serverPeers);
    }

    /** A switch's job table (empty if the plan gives it nothing to aggregate). */
    public List<SwitchRow> switchRows(String switchId) {
        return switchRows.getOrDefault(switchId, List.of());
    }

    /** A PS's job. */
    public ServerJobConfig serverJob(String ps) {
        ServerJobConfig job = serverJobs.get(ps);
        if (job == null) {
            throw new IllegalArgumentException("'" + ps + "' is not a PS with a share; PSs: " + serverJobs.keySet());
        }
        return job;
    }

    /** Worker {@code worker}'s shards, in shard order. */
    public List<WorkerShard> workerShards(int worker) {
        return workerShards.get(worker);
    }

    /**
     * The plan's multicast trees as bmv2 {@code simple_switch_CLI} commands for one switch: per tree through it
     * (tree t = the t-th of the plan's trees), multicast group {@code firstGroup + t} replicating to the tree's ports
     * at this switch (the per-hop port bitmap). Node handles are numbered from {@code firstNodeHandle}, the number of
     * multicast nodes already created on the switch (0 on a fresh one; {@code JobTable} creates one per worker of
     * each job). The PS sends a distribution round to group {@code firstGroup + t} and releases it after.
     *
     * @throws IllegalArgumentException if the group range leaves 1..65535.
     */
    public List<String> multicastCommands(String switchId, int firstGroup, int firstNodeHandle) {
        if (firstGroup < 1 || firstGroup + plan.multicastTrees().size() - 1 > 0xFFFF) {
            throw new IllegalArgumentException("multicast groups " + firstGroup + ".."
                + (firstGroup + plan.multicastTrees().size() - 1) + " leave 1..65535");
        }
        List<String> commands = new ArrayList<>();
        int handle = firstNodeHandle;
        for (int t = 0; t < plan.multicastTrees().size(); t++) {
            List<Integer> ports = plan.multicastTrees().get(t).ports().get(switchId);
            if (ports == null || ports.isEmpty()) {
                continue;
            }
            int group = firstGroup + t;
            commands.add("mc_mgrp_create " + group);
            StringBuilder node = new StringBuilder("mc_node_create " + t);
            for (int port : ports) {
                node.append(' ').append(port);
            }
            commands.add(node.toString());
            commands.add("mc_node_associate " + group + " " + handle++);
        }
        return commands;
    }

    /**
     * The plan's switch job tables for {@code inagg_v1model.p4}: per switch that aggregates anything, a
     * {@link JobTable} of upstream jobs ({@link JobSpec#upstream}), one per PS it serves (slot ranges packed from 0,
     * {@link Settings#slots()} each), whose {@link JobTable#simpleSwitchCommands()} configure a freshly started bmv2.
     * <p>
     * Ports are the topology's (a switch's port for a link = the link's position among the switch's links in file
     * order; a local worker is reached on the port towards the previous hop of its path, the PS on the row's
     * {@code upstreamPort}). Addresses follow {@link #mac(int)} / {@link #ipv4(int)} of each node's position in the
     * topology file; worker endpoints of shard j use UDP port {@code 40000 + j}, the PS {@link InaggP4#UDP_PORT}.
     * A PS more than one hop away is reached through the fabric: the switches between must route the PARTIAL by IP
     * (this program aggregates and does not forward).
     *
     * @throws IllegalArgumentException if the topology is not the plan's (a node or link of the plan missing).
     */
    public Map<String, JobTable> p4JobTables(Topology topology) {
        Map<String, JobTable> tables = new LinkedHashMap<>();
        for (Map.Entry<String, List<SwitchRow>> entry : switchRows.entrySet()) {
            String sw = entry.getKey();
            int switchIndex = nodeIndex(topology, sw);
            JobTable table = new JobTable(new SwitchAddress(mac(switchIndex), ipv4(switchIndex)));
            int slotBase = 0;
            for (SwitchRow row : entry.getValue()) {
                int j = shardOfJob(row.config().jobId());
                String ps = shards.get(j).ps();
                List<WorkerEndpoint> endpoints = new ArrayList<>();
                for (int w = 0; w < workers.size(); w++) {
                    int node = nodeIndex(topology, workers.get(w));
                    boolean local = workerShards.get(w).get(j).aggregateAt().equals(sw);
                    int port = local ? portTowards(topology, switchIndex, previousHop(w, j, sw)) : 0;
                    endpoints.add(new WorkerEndpoint(workerShards.get(w).get(j).peer(), port, mac(node), ipv4(node),
                        40_000 + j));
                }
                int psNode = nodeIndex(topology, ps);
                WorkerEndpoint server = new WorkerEndpoint(serverPeers.get(ps), upstreamPort(sw, ps), mac(psNode),
                    ipv4(psNode), InaggP4.UDP_PORT);
                table.add(JobSpec.upstream(row.config().jobId(), settings.slots(), slotBase,
                    settings.lanesPerPacket(), endpoints, server, row.upstream().localWorkers()));
                slotBase += settings.slots();
            }
            tables.put(sw, table);
        }
        return tables;
    }

    /** MAC of the node at {@code index} in the topology file: {@code 02:00:00:00:hh:ll}. */
    public static long mac(int index) {
        return 0x0200_0000_0000L | (index & 0xFFFF);
    }

    /** IPv4 of the node at {@code index} in the topology file: {@code 10.0.hh.ll}, + 1 so that none ends in .0. */
    public static int ipv4(int index) {
        return (10 << 24) | ((index + 1) & 0xFFFF);
    }

    private static int nodeIndex(Topology topology, String id) {
        if (!topology.contains(id)) {
            throw new IllegalArgumentException("node '" + id + "' of the plan is not in topology '" + topology.name()
                + "'");
        }
        return topology.index(id);
    }

    private static int portTowards(Topology topology, int from, String neighbour) {
        int arc = topology.arcBetween(from, nodeIndex(topology, neighbour));
        if (arc < 0) {
            throw new IllegalArgumentException("no link between '" + topology.node(from).id() + "' and '" + neighbour
                + "' in topology '" + topology.name() + "'");
        }
        return topology.port(arc);
    }

    private int shardOfJob(int jobId) {
        for (int j = 0; j < shards.size(); j++) {
            if (shards.get(j).jobId() == jobId) {
                return j;
            }
        }
        throw new IllegalStateException("no shard for job " + jobId);
    }

    /** The node before {@code sw} on worker {@code w}'s path for shard {@code j}. */
    private String previousHop(int w, int j, String sw) {
        for (InaPlan.Share share : plan.workers().get(w).shares()) {
            if (share.ps().equals(shards.get(j).ps())) {
                List<String> path = share.path();
                if (path == null || path.size() < 2 || !path.getLast().equals(sw)) {
                    throw new IllegalArgumentException("worker '" + workers.get(w) + "': path " + path
                        + " for PS '" + share.ps() + "' does not end at '" + sw + "'");
                }
                return path.get(path.size() - 2);
            }
        }
        throw new IllegalStateException("worker " + workers.get(w) + " has no share for " + shards.get(j).ps());
    }

    private int upstreamPort(String sw, String ps) {
        for (InaPlan.SwitchJobEntry row : plan.switchJobTables().get(sw)) {
            if (row.ps().equals(ps)) {
                return row.upstreamPort();
            }
        }
        throw new IllegalStateException("switch " + sw + " has no row for " + ps);
    }

    /** Transport peers in all: switches, PSs and the workers' endpoints. */
    public int peers() {
        return switchPeers.size() + serverPeers.size() + workers.size() * shards.size();
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        text.append(String.format("%s plan for %s: %d workers, %d shard(s)%n", plan.algorithm(), plan.topology(),
            workers.size(), shards.size()));
        for (Shard shard : shards) {
            text.append(String.format("  job %d: PS %s, share %.4f%n", shard.jobId(), shard.ps(), shard.share()));
        }
        for (Map.Entry<String, List<SwitchRow>> table : switchRows.entrySet()) {
            for (SwitchRow row : table.getValue()) {
                int[] local = row.upstream().localWorkers();
                String[] names = Arrays.stream(local).mapToObj(workers::get).toArray(String[]::new);
                text.append(String.format("  switch %s: job %d sums %s -> PS %s%n", table.getKey(),
                    row.config().jobId(), String.join(",", names),
                    shards.stream().filter(s -> s.jobId() == row.config().jobId()).findFirst().orElseThrow().ps()));
            }
        }
        for (Shard shard : shards) {
            List<String> direct = new ArrayList<>();
            for (int i = 0; i < workers.size(); i++) {
                if (workerShards.get(i).get(shards.indexOf(shard)).aggregateAt().equals(shard.ps())) {
                    direct.add(workers.get(i));
                }
            }
            if (!direct.isEmpty()) {
                text.append(String.format("  PS %s: job %d takes %s directly%n", shard.ps(), shard.jobId(),
                    String.join(",", direct)));
            }
        }
        return text.toString();
    }
}
