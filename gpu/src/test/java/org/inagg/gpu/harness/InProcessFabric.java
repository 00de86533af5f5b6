package org.inagg.gpu.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.inagg.agent.CounterRegistry;
import org.inagg.transport.IdleStrategies;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.InProcessNetwork;
import org.inagg.wire.InaggHeader;

/**
 * A software switch and the workers of several jobs in this process, over in-process rings, their agents spread over a
 * few threads: the network of the PASSING tests and benchmarks (a small cousin of perf's LocalCluster, which this
 * module must not depend on).
 */
public final class InProcessFabric implements AutoCloseable
{
    /** Retransmission timeout of the fabric's workers in microseconds; the datapath's default when unset. */
    public static final String RETRANSMIT_PROP_NAME = "inagg.gpu.fabric.retransmit.us";

    private final List<AgentRunner> runners = new ArrayList<>();
    private final AllReduceJob[][] jobs;
    private final int[] jobIds;
    private final SoftwareSwitch softwareSwitch;

    /**
     * @param jobIds        the jobs' ids.
     * @param workers       workers of each job.
     * @param slots         switch slots per job.
     * @param lanes         lanes per packet (the fixed-point block size).
     * @param threads       agent threads (the switch shares the first).
     */
    public InProcessFabric(final int[] jobIds, final int[] workers, final int slots, final int lanes, final int threads)
    {
        this.jobIds = jobIds.clone();
        final int maxMessage = InaggHeader.messageLength(lanes);
        final int endpoints = 1 + Arrays.stream(workers).sum();
        final int[] inboxes = new int[endpoints];
        Arrays.fill(inboxes, powerOfTwo((long)slots * maxMessage * 4));
        inboxes[0] = powerOfTwo((endpoints - 1L) * slots * maxMessage * 2);
        final InProcessNetwork network = new InProcessNetwork(inboxes, maxMessage);
        final CounterRegistry counters = new CounterRegistry(64 + 16 * endpoints);
        softwareSwitch = new SoftwareSwitch(network.endpoint(0), counters, 256);
        jobs = new AllReduceJob[jobIds.length][];
        final List<Agent> agents = new ArrayList<>();
        int endpoint = 1;
        for (int j = 0; j < jobIds.length; j++)
        {
            softwareSwitch.addJob(new SwitchJobConfig(jobIds[j], workers[j], slots, lanes));
            jobs[j] = new AllReduceJob[workers[j]];
            for (int w = 0; w < workers[j]; w++)
            {
                final JobContext context = new JobContext()
                    .jobId(jobIds[j])
                    .workerId(w)
                    .workers(workers[j])
                    .transport(network.endpoint(endpoint++))
                    .peerTimeout(Duration.ofSeconds(20))
                    .counters(counters);
                final Long retransmitUs = Long.getLong(RETRANSMIT_PROP_NAME);
                if (retransmitUs != null)
                {
                    context.retransmitTimeout(Duration.ofNanos(retransmitUs * 1000));
                }
                jobs[j][w] = AllReduceJob.create(context);
                agents.add(jobs[j][w].agent());
            }
        }
        final int runnerCount = Math.max(1, Math.min(threads, agents.size() + 1));
        final List<List<Agent>> groups = new ArrayList<>();
        for (int t = 0; t < runnerCount; t++)
        {
            groups.add(new ArrayList<>());
        }
        groups.get(0).add(softwareSwitch);
        for (int a = 0; a < agents.size(); a++)
        {
            groups.get((a + 1) % runnerCount).add(agents.get(a));
        }
        for (final List<Agent> group : groups)
        {
            final AgentRunner runner = new AgentRunner(IdleStrategies.byName("backoff"), Throwable::printStackTrace,
                null, new CompositeAgent(group));
            runners.add(runner);
            AgentRunner.startOnThread(runner);
        }
        for (final AllReduceJob[] job : jobs)
        {
            for (final AllReduceJob worker : job)
            {
                worker.awaitJoined();
            }
        }
    }

    /** G jobs (ids {@code firstJobId + g}) of H workers: PASSING's chunk jobs. */
    public static InProcessFabric passing(final int hosts, final int gpus, final int lanes, final int threads)
    {
        final int[] ids = new int[gpus];
        final int[] workers = new int[gpus];
        for (int g = 0; g < gpus; g++)
        {
            ids[g] = 10 + g;
            workers[g] = hosts;
        }
        return new InProcessFabric(ids, workers, SwitchJobConfig.DEFAULT_SLOTS, lanes, threads);
    }

    /** One job of H*G workers: the flat, per-GPU all-reduce. */
    public static InProcessFabric flat(final int contributors, final int lanes, final int threads)
    {
        return new InProcessFabric(new int[] {1}, new int[] {contributors}, SwitchJobConfig.DEFAULT_SLOTS, lanes,
            threads);
    }

    /** Worker {@code worker} of the job at index {@code job}. */
    public AllReduceJob job(final int job, final int worker)
    {
        return jobs[job][worker];
    }

    /** A counter of the switch, e.g. {@link SwitchCounter#CONTRIBUTIONS}: what the switch had to aggregate. */
    public long switchCounter(final SwitchCounter counter)
    {
        return softwareSwitch.counter(counter);
    }

    public int jobId(final int job)
    {
        return jobIds[job];
    }

    @Override
    public void close()
    {
        for (final AgentRunner runner : runners)
        {
            runner.close();
        }
    }

    private static int powerOfTwo(final long wanted)
    {
        final long clamped = Math.max(1 << 18, Math.min(wanted, 1 << 26));
        return (int)Long.highestOneBit(clamped - 1) << 1;
    }
}
