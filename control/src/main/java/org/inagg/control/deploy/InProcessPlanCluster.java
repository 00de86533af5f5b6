package org.inagg.control.deploy;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.inagg.agent.CounterRegistry;
import org.inagg.transport.IdleStrategies;
import org.inagg.api.AllReduceJob;
import org.inagg.api.ElementType;
import org.inagg.api.JobContext;
import org.inagg.api.ShardedAllReduce;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.Transport;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A deployed plan run in one process: the plan's software switches (two-level aggregation), its parameter servers and
 * every worker's {@link ShardedAllReduce}, over {@link InProcessNetwork} (optionally through a
 * {@link FaultInjectingTransport} per endpoint), all on one agent thread so that a 2-core machine runs a whole
 * fabric. {@link #flat} builds the reference it is compared with: one switch summing every worker.
 */
public final class InProcessPlanCluster implements AutoCloseable {

    private static final int INBOX_BYTES = 1 << 22;
    private static final int MAX_MESSAGE = 2048;

    private final Map<String, SoftwareSwitch> switches = new LinkedHashMap<>();
    private final Map<String, ParameterServer> servers = new LinkedHashMap<>();
    private final List<ShardedAllReduce> workers = new ArrayList<>();
    private final AgentRunner runner;

    private InProcessPlanCluster(Map<String, SoftwareSwitch> switches, Map<String, ParameterServer> servers,
                                 List<List<AllReduceJob>> jobs, double[] shares, List<Agent> agents) {
        this.switches.putAll(switches);
        this.servers.putAll(servers);
        runner = new AgentRunner(IdleStrategies.byName("backoff"), Throwable::printStackTrace, null,
            new CompositeAgent(agents));
        AgentRunner.startOnThread(runner);
        try {
            for (List<AllReduceJob> mine : jobs) {
                for (AllReduceJob job : mine) {
                    job.awaitJoined();
                }
                workers.add(new ShardedAllReduce(mine, shares));
            }
        } catch (RuntimeException ex) {
            runner.close();
            throw ex;
        }
    }

    /**
     * Starts the plan's nodes and joins every worker's jobs.
     *
     * @param faults      drop, duplicate and reorder rate of every endpoint (0: none).
     * @param seed        seed of the faults.
     * @param peerTimeout how long a worker waits for a silent peer before failing.
     */
    public static InProcessPlanCluster deploy(PlanDeployment deployment, double faults, long seed,
                                              Duration peerTimeout) {
        InProcessNetwork network = new InProcessNetwork(deployment.peers(), INBOX_BYTES, MAX_MESSAGE);
        CounterRegistry registry = new CounterRegistry(64 * 1024);
        List<Agent> agents = new ArrayList<>();
        Map<String, SoftwareSwitch> switches = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> sw : deployment.switchPeers().entrySet()) {
            SoftwareSwitch node = new SoftwareSwitch(endpoint(network, sw.getValue(), faults, seed), registry, 64);
            for (PlanDeployment.SwitchRow row : deployment.switchRows(sw.getKey())) {
                node.addJob(row.config(), row.upstream());
            }
            switches.put(sw.getKey(), node);
            agents.add(node);
        }
        Map<String, ParameterServer> servers = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> ps : deployment.serverPeers().entrySet()) {
            ParameterServer node = new ParameterServer(endpoint(network, ps.getValue(), faults, seed), registry, 64,
                1 << 16);
            node.addJob(deployment.serverJob(ps.getKey()));
            servers.put(ps.getKey(), node);
            agents.add(node);
        }
        List<List<AllReduceJob>> jobs = new ArrayList<>();
        for (int w = 0; w < deployment.workers().size(); w++) {
            List<AllReduceJob> mine = new ArrayList<>();
            for (PlanDeployment.WorkerShard shard : deployment.workerShards(w)) {
                AllReduceJob job = AllReduceJob.create(context(shard.jobId(), w, deployment.workers().size(),
                    endpoint(network, shard.peer(), faults, seed), shard.sendTo(), peerTimeout, registry));
                mine.add(job);
                agents.add(job.agent());
            }
            jobs.add(mine);
        }
        return new InProcessPlanCluster(switches, servers, jobs, deployment.shares(), agents);
    }

    /** The reference: one switch summing all {@code workers} (one job, no parameter server). */
    public static InProcessPlanCluster flat(int workers, PlanDeployment.Settings settings, double faults, long seed,
                                            Duration peerTimeout) {
        InProcessNetwork network = new InProcessNetwork(workers + 1, INBOX_BYTES, MAX_MESSAGE);
        CounterRegistry registry = new CounterRegistry(64 * 1024);
        int[] peers = new int[workers];
        for (int w = 0; w < workers; w++) {
            peers[w] = 1 + w;
        }
        SoftwareSwitch sw = new SoftwareSwitch(endpoint(network, 0, faults, seed), registry, 64);
        sw.addJob(new SwitchJobConfig(1, workers, settings.slots(), settings.lanesPerPacket(),
            SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP, peers));
        List<Agent> agents = new ArrayList<>(List.of(sw));
        List<List<AllReduceJob>> jobs = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            AllReduceJob job = AllReduceJob.create(context(1, w, workers, endpoint(network, peers[w], faults, seed), 0,
                peerTimeout, registry));
            agents.add(job.agent());
            jobs.add(List.of(job));
        }
        return new InProcessPlanCluster(Map.of("flat", sw), Map.of(), jobs, new double[] {1}, agents);
    }

    private static JobContext context(int jobId, int worker, int workers, Transport transport, int sendTo,
                                      Duration peerTimeout, CounterRegistry registry) {
        return new JobContext().jobId(jobId).workerId(worker).workers(workers).transport(transport)
            .switchPeer(sendTo).peerTimeout(peerTimeout).counters(registry).conclude();
    }

    private static Transport endpoint(InProcessNetwork network, int peer, double faults, long seed) {
        Transport endpoint = network.endpoint(peer);
        return faults == 0 ? endpoint
            : new FaultInjectingTransport(endpoint, FaultConfig.lossy(faults, seed * 1_000_003L + peer));
    }

    /** Worker {@code w}'s all-reduce. */
    public ShardedAllReduce worker(int w) {
        return workers.get(w);
    }

    public int workers() {
        return workers.size();
    }

    /**
     * Every worker all-reduces its tensor at once (worker {@code w} gives {@code tensors[w]}, replaced by the sum);
     * returns when all are done.
     */
    public void allReduce(float[][] tensors) {
        if (tensors.length != workers.size()) {
            throw new IllegalArgumentException(tensors.length + " tensors for " + workers.size() + " workers");
        }
        CompletableFuture<?>[] all = new CompletableFuture<?>[tensors.length];
        for (int w = 0; w < tensors.length; w++) {
            MemorySegment data = MemorySegment.ofArray(tensors[w]);
            all[w] = workers.get(w).allReduceAsync(data, data, ElementType.FLOAT32);
        }
        CompletableFuture.allOf(all).join();
    }

    /** A switch's counter, by the plan's switch id (or {@code flat}). */
    public long switchCounter(String switchId, SwitchCounter counter) {
        return switches.get(switchId).counter(counter);
    }

    /** A PS's counter. */
    public long serverCounter(String ps, ServerCounter counter) {
        return servers.get(ps).counter(counter);
    }

    public List<String> switchIds() {
        return List.copyOf(switches.keySet());
    }

    public List<String> serverIds() {
        return List.copyOf(servers.keySet());
    }

    @Override
    public void close() {
        runner.close();
    }
}
