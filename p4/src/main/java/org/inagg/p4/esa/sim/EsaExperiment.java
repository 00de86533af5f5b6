package org.inagg.p4.esa.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.esa.EsaJobConfig;
import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.EsaSwitchSettings;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.wire.InaggHeader;

/**
 * Jobs sharing one switch's aggregators, in virtual time, under three schemes: ESA (shared pool, free on completion,
 * preemption by priority), ATP (shared pool, free on the server's acknowledgement, collisions to the server) and
 * SwitchML (the existing {@link SoftwareSwitch}, the pool split equally and statically among the jobs). Nodes: 0 the
 * switch, 1..J one parameter server per job, then the workers.
 * <pre>
 *   java ... org.inagg.p4.esa.sim.EsaExperiment [window] [maxHostDelayNs] [seed] [policy] [timeoutNs]
 * </pre>
 */
public final class EsaExperiment
{
    /** The scheme the switch runs. */
    public enum Scheme
    {
        ESA, ATP, SWITCHML
    }

    /**
     * A job.
     *
     * @param workers        workers.
     * @param blocks         blocks of {@code lanes} int32 lanes (its gradient).
     * @param startNs        when its workers start.
     * @param staticPriority the header priority its workers send (used by {@link PriorityPolicy#HEADER}).
     */
    public record JobSpec(int workers, int blocks, long startNs, int staticPriority)
    {
    }

    /**
     * The experiment's parameters.
     *
     * @param jobs            the jobs.
     * @param aggregators     aggregators of the switch (SwitchML: split equally among the jobs).
     * @param window          blocks in flight per worker under ESA and ATP (SwitchML: its share of the pool).
     * @param lanes           lanes per packet.
     * @param gbps            every link's rate.
     * @param propagationNs   one-way delay of each link.
     * @param timeoutNs       workers' retransmission timeout.
     * @param maxHostDelayNs  workers wait a uniform 0..this before sending a slot's next block.
     * @param drop            chance a hop loses a message.
     * @param duplicate       chance a hop duplicates a message.
     * @param seed            of every random draw.
     * @param policy          ESA's priority policy.
     * @param controlPeriodNs how often the control plane tells the switch each job's remaining bytes (SRF).
     * @param limitNs         virtual time after which the run stops.
     * @param lossyServers    whether drops and duplicates hit the servers' links too (by default they are lossless:
     *                        a lost copy of a completed sum cannot be recovered, see docs/esa.md).
     */
    public record Setup(List<JobSpec> jobs, int aggregators, int window, int lanes, double gbps, long propagationNs,
        long timeoutNs, long maxHostDelayNs, double drop, double duplicate, long seed, PriorityPolicy policy,
        long controlPeriodNs, long limitNs, boolean lossyServers)
    {
        public Setup
        {
            jobs = List.copyOf(jobs);
        }
    }

    /** A job's outcome: completion time (last worker done, from its start), results checked, wrong, retransmitted. */
    public record JobOutcome(long jctNs, long verified, long wrong, long retransmissions, boolean done)
    {
    }

    /** A run's outcome. */
    public record Outcome(Scheme scheme, List<JobOutcome> jobs, long fallbackBytes, long resultCopyBytes,
        long preemptions, long collisions, long flushes, long serverCompleted, long serverOverlaps, long dropped,
        long duplicated, long wallMillis)
    {
        public double averageJctMicros()
        {
            return jobs.stream().mapToLong(JobOutcome::jctNs).average().orElse(0) / 1000.0;
        }

        /** Every job finished, every result checked equal to the exact int sum, none wrong. */
        public boolean allExact(final Setup setup)
        {
            for (int j = 0; j < jobs.size(); j++)
            {
                final JobOutcome o = jobs.get(j);
                final JobSpec spec = setup.jobs().get(j);
                if (!o.done() || o.wrong() != 0 || o.verified() != (long)spec.workers() * spec.blocks())
                {
                    return false;
                }
            }
            return true;
        }

        public long retransmissions()
        {
            return jobs.stream().mapToLong(JobOutcome::retransmissions).sum();
        }
    }

    private EsaExperiment()
    {
    }

    /** The documented scenario: 4 jobs of 4 workers, 4k..32k blocks, staggered starts, a 64-aggregator switch. */
    public static Setup defaultSetup(final int window, final long maxHostDelayNs, final long seed)
    {
        return new Setup(List.of(
            new JobSpec(4, 32_000, 0, 1),
            new JobSpec(4, 16_000, 200_000, 1),
            new JobSpec(4, 8_000, 400_000, 1),
            new JobSpec(4, 4_000, 600_000, 1)),
            64, window, 256, 100, 1_000, 200_000, maxHostDelayNs, 0, 0, seed, PriorityPolicy.SHORTEST_REMAINING_FIRST,
            20_000, 1_000_000_000L, false);
    }

    public static Outcome run(final Scheme scheme, final Setup setup)
    {
        final long wallStart = System.nanoTime();
        final int jobCount = setup.jobs().size();
        int nodes = 1 + jobCount;
        final int[][] workerNodes = new int[jobCount][];
        for (int j = 0; j < jobCount; j++)
        {
            workerNodes[j] = new int[setup.jobs().get(j).workers()];
            for (int w = 0; w < workerNodes[j].length; w++)
            {
                workerNodes[j][w] = nodes++;
            }
        }
        final int maxWorkers = setup.jobs().stream().mapToInt(JobSpec::workers).max().orElse(1);
        final VirtualNetwork network = new VirtualNetwork(nodes, setup.gbps(), setup.propagationNs(), setup.drop(),
            setup.duplicate(), setup.seed(), InaggHeader.messageLength(setup.lanes() + 64));
        final CounterRegistry registry = new CounterRegistry(512);
        for (int j = 0; j < jobCount && !setup.lossyServers(); j++)
        {
            network.setLossless(1 + j);
        }

        EsaSwitch esa = null;
        final ParameterServer[] servers = new ParameterServer[jobCount];
        final int window;
        if (scheme == Scheme.SWITCHML)
        {
            window = setup.aggregators() / jobCount;
            final SoftwareSwitch sw = new SoftwareSwitch(network.transport(VirtualNetwork.SWITCH), registry, 64);
            for (int j = 0; j < jobCount; j++)
            {
                sw.addJob(new SwitchJobConfig(j + 1, setup.jobs().get(j).workers(), window, setup.lanes(),
                    j * window, SwitchJobConfig.NO_MULTICAST_GROUP, workerNodes[j]));
            }
            sw.doWork();
            network.attach(VirtualNetwork.SWITCH, sw);
        }
        else
        {
            window = setup.window();
            final AllocationMode mode = scheme == Scheme.ESA ? AllocationMode.PREEMPTIVE
                : AllocationMode.DEALLOCATE_ON_ACK;
            final PriorityPolicy policy = scheme == Scheme.ESA ? setup.policy() : PriorityPolicy.HEADER;
            esa = new EsaSwitch(network.transport(VirtualNetwork.SWITCH), registry,
                new EsaSwitchSettings(setup.aggregators(), maxWorkers, setup.lanes(), mode, policy, 64));
            for (int j = 0; j < jobCount; j++)
            {
                final JobSpec spec = setup.jobs().get(j);
                esa.addJob(new EsaJobConfig(j + 1, spec.workers(), setup.lanes(), window, spec.staticPriority(),
                    workerNodes[j], 1 + j, (long)spec.blocks() * setup.lanes() * Integer.BYTES));
                servers[j] = new ParameterServer(network.transport(1 + j), registry, 64, 1 << 16);
                servers[j].addJob(new ServerJobConfig(j + 1, spec.workers(), workerNodes[j], VirtualNetwork.SWITCH,
                    scheme == Scheme.ATP));
                servers[j].applyControl();
                network.attach(1 + j, servers[j]);
            }
            esa.applyControl();
            network.attach(VirtualNetwork.SWITCH, esa);
        }

        final List<List<ScriptedWorker>> workers = new ArrayList<>();
        for (int j = 0; j < jobCount; j++)
        {
            final JobSpec spec = setup.jobs().get(j);
            final List<ScriptedWorker> jobWorkers = new ArrayList<>();
            for (int w = 0; w < spec.workers(); w++)
            {
                final ScriptedWorker worker = new ScriptedWorker(network, workerNodes[j][w], j + 1, w, spec.workers(),
                    spec.blocks(), window, setup.lanes(), spec.staticPriority(), setup.timeoutNs(),
                    setup.maxHostDelayNs(), setup.seed() * 1_000_003L + j * 1_009L + w);
                network.attach(workerNodes[j][w], worker);
                worker.start(spec.startNs());
                jobWorkers.add(worker);
            }
            workers.add(jobWorkers);
        }
        if (esa != null && setup.policy() == PriorityPolicy.SHORTEST_REMAINING_FIRST)
        {
            scheduleControl(network, esa, setup, workers, 0);
        }
        network.run(setup.limitNs());

        final List<JobOutcome> outcomes = new ArrayList<>();
        for (int j = 0; j < jobCount; j++)
        {
            long finish = 0;
            long verified = 0;
            long wrong = 0;
            long retransmissions = 0;
            boolean done = true;
            for (final ScriptedWorker worker : workers.get(j))
            {
                done &= worker.done();
                finish = Math.max(finish, worker.done() ? worker.finishNs() : network.now());
                verified += worker.verifiedResults();
                wrong += worker.wrongResults();
                retransmissions += worker.retransmissions();
            }
            outcomes.add(
                new JobOutcome(finish - setup.jobs().get(j).startNs(), verified, wrong, retransmissions, done));
        }
        long serverCompleted = 0;
        long overlaps = 0;
        for (final ParameterServer server : servers)
        {
            if (server != null)
            {
                serverCompleted += server.counter(ServerCounter.COMPLETED);
                overlaps += server.counter(ServerCounter.OVERLAPS);
            }
        }
        return new Outcome(scheme, outcomes,
            esa == null ? 0 : esa.counter(EsaCounter.FALLBACK_BYTES),
            esa == null ? 0 : esa.counter(EsaCounter.RESULT_COPY_BYTES),
            esa == null ? 0 : esa.counter(EsaCounter.PREEMPTIONS),
            esa == null ? 0 : esa.counter(EsaCounter.FALLBACK_COLLISION),
            esa == null ? 0 : esa.counter(EsaCounter.FLUSHES),
            serverCompleted, overlaps, network.dropped(), network.duplicated(),
            (System.nanoTime() - wallStart) / 1_000_000);
    }

    /** The control plane: every period, each job's remaining bytes (its slowest worker's) to the switch. */
    private static void scheduleControl(final VirtualNetwork network, final EsaSwitch esa, final Setup setup,
        final List<List<ScriptedWorker>> workers, final long at)
    {
        network.schedule(at, () ->
        {
            boolean running = false;
            for (int j = 0; j < workers.size(); j++)
            {
                int slowest = Integer.MAX_VALUE;
                for (final ScriptedWorker worker : workers.get(j))
                {
                    slowest = Math.min(slowest, worker.completedBlocks());
                    running |= !worker.done();
                }
                esa.setRemainingBytes(j + 1,
                    (long)(setup.jobs().get(j).blocks() - slowest) * setup.lanes() * Integer.BYTES);
            }
            esa.applyControl();
            if (running)
            {
                scheduleControl(network, esa, setup, workers, network.now() + setup.controlPeriodNs());
            }
        });
    }

    public static String describe(final Setup setup)
    {
        final StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "pool %d aggregators, ESA/ATP window %d, SwitchML share %d, %d lanes, "
                + "%.0f Gb/s links, %d ns per hop, timeout %d us, host delay 0..%d ns, drop %.4f, dup %.4f, seed %d, "
                + "ESA policy %s%n", setup.aggregators(), setup.window(), setup.aggregators() / setup.jobs().size(),
            setup.lanes(), setup.gbps(), setup.propagationNs(), setup.timeoutNs() / 1000, setup.maxHostDelayNs(),
            setup.drop(), setup.duplicate(), setup.seed(), setup.policy()));
        for (int j = 0; j < setup.jobs().size(); j++)
        {
            final JobSpec spec = setup.jobs().get(j);
            b.append(String.format(Locale.ROOT, "  job %d: %d workers, %d blocks (%.1f MiB), starts at %d us%n", j + 1,
                spec.workers(), spec.blocks(), spec.blocks() * (double)setup.lanes() * 4 / (1 << 20),
                spec.startNs() / 1000));
        }
        return b.toString();
    }

    public static String format(final Outcome o, final Setup setup)
    {
        final StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-8s avg JCT %9.1f us | JCTs", o.scheme(), o.averageJctMicros()));
        for (final JobOutcome job : o.jobs())
        {
            b.append(String.format(Locale.ROOT, " %8.1f%s", job.jctNs() / 1000.0, job.done() ? "" : "(unfinished)"));
        }
        b.append(String.format(Locale.ROOT, " us | fallback %.2f MB, result copies %.2f MB, preemptions %d, "
                + "collisions %d, flushes %d, server-completed %d, overlaps %d, retransmissions %d, exact %s "
                + "(wall %d ms)", o.fallbackBytes() / 1e6, o.resultCopyBytes() / 1e6, o.preemptions(), o.collisions(),
            o.flushes(), o.serverCompleted(), o.serverOverlaps(), o.retransmissions(), o.allExact(setup),
            o.wallMillis()));
        return b.toString();
    }
}
