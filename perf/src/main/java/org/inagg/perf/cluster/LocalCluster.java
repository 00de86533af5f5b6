package org.inagg.perf.cluster;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.inagg.agent.CounterKey;
import org.inagg.agent.CounterRegistry;
import org.inagg.transport.IdleStrategies;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.TransportCounters;
import org.inagg.transport.UdpTransport;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.transport.capture.PcapTransport;
import org.inagg.transport.capture.PcapWriter;
import org.inagg.wire.InaggHeader;

/**
 * A software switch and W workers of one job in this process, joined by in-process rings, loopback UDP or DPDK
 * net_ring ports ({@link DpdkRingNetwork}), their agents spread over a few threads. What the CLI's {@code local} command and the end-to-end tests run.
 */
public final class LocalCluster implements AutoCloseable
{
    private final ClusterOptions options;
    private final CounterRegistry counters;
    private final SoftwareSwitch softwareSwitch;
    private final List<AllReduceJob> jobs = new ArrayList<>();
    private final List<AgentRunner> runners = new ArrayList<>();
    private final List<Agent> workerAgents = new ArrayList<>();
    private KillableAgent killableSwitch;
    private DpdkRingNetwork dpdkNetwork;

    private LocalCluster(final ClusterOptions options, final PcapWriter switchCapture, final CounterRegistry registry)
    {
        this.options = options;
        this.counters = registry != null ? registry : new CounterRegistry(countersCapacity(options.workers()));
        final int maxMessage = InaggHeader.messageLength(options.lanesPerPacket());
        Transport switchTransport;
        final FrameHeaders switchFrames;
        final List<Transport> workerTransports = new ArrayList<>();
        final int switchPeer;
        if (options.transport() == TransportKind.INPROC)
        {
            final int[] inboxes = new int[options.workers() + 1];
            java.util.Arrays.fill(inboxes, inboxBytes(options.slots() * (long)maxMessage * 4));
            inboxes[0] = inboxBytes(options.workers() * (long)options.slots() * maxMessage * 2);
            final InProcessNetwork network = new InProcessNetwork(inboxes, maxMessage);
            switchTransport = network.endpoint(0);
            switchFrames = FrameHeaders.inProcess(0);
            for (int w = 0; w < options.workers(); w++)
            {
                workerTransports.add(network.endpoint(w + 1));
            }
            switchPeer = 0;
        }
        else if (options.transport() == TransportKind.DPDK)
        {
            dpdkNetwork = new DpdkRingNetwork(options.workers(), maxMessage);
            switchTransport = dpdkNetwork.switchTransport();
            switchFrames = FrameHeaders.inPlace();
            workerTransports.addAll(dpdkNetwork.workerTransports());
            switchPeer = 0;
        }
        else
        {
            final InetAddress loopback = InetAddress.getLoopbackAddress();
            final UdpTransport udpSwitch = UdpTransport.open(new InetSocketAddress(loopback, 0), List.of(),
                options.workers() + 1, maxMessage, 64);
            switchTransport = udpSwitch;
            switchFrames = FrameHeaders.udp(udpSwitch);
            for (int w = 0; w < options.workers(); w++)
            {
                workerTransports.add(UdpTransport.open(new InetSocketAddress(loopback, 0),
                    List.of(udpSwitch.localAddress()), 1, maxMessage, 64));
            }
            switchPeer = 0;
        }
        switchTransport.countInto(TransportCounters.in(counters, "switch", CounterKey.NONE, CounterKey.NONE));
        switchTransport = PcapTransport.wrap(switchTransport, switchCapture, switchFrames);
        softwareSwitch = new SoftwareSwitch(faulty(switchTransport, 0), counters, 256);
        killableSwitch = new KillableAgent(softwareSwitch);
        softwareSwitch.addJob(new SwitchJobConfig(ClusterOptions.JOB_ID, options.workers(), options.slots(),
            options.lanesPerPacket()));
        for (int w = 0; w < options.workers(); w++)
        {
            final AllReduceJob job = AllReduceJob.create(new JobContext()
                .jobId(ClusterOptions.JOB_ID)
                .workerId(w)
                .workers(options.workers())
                .transport(faulty(workerTransports.get(w), w + 1))
                .switchPeer(switchPeer)
                .retransmitTimeout(options.retransmitTimeout())
                .peerTimeout(options.peerTimeout())
                .counters(counters));
            jobs.add(job);
            workerAgents.add(new KillableAgent(job.agent()));
        }
    }

    /** Builds the cluster, starts its agent threads and waits until every worker joined. */
    public static LocalCluster start(final ClusterOptions options)
    {
        return start(options, null);
    }

    /**
     * Like {@link #start(ClusterOptions)}, with a packet capture at the switch: every packet between the switch and
     * the workers, once, in both directions (in-process endpoints are 10.0.0.1 for the switch and 10.0.0.(w + 2) for
     * worker w, see {@link FrameHeaders#inProcess}). The switch's transport closes {@code switchCapture} on close.
     *
     * @param switchCapture the capture file, or null for none.
     */
    public static LocalCluster start(final ClusterOptions options, final PcapWriter switchCapture)
    {
        return start(options, switchCapture, null);
    }

    /**
     * Like {@link #start(ClusterOptions, PcapWriter)}, with the switch's and the workers' counters in {@code counters}
     * (e.g. a {@link org.inagg.agent.counters.CountersFile}'s, for {@code inagg stat}); null for a private registry.
     * It needs room for {@link #countersCapacity} counters.
     */
    public static LocalCluster start(final ClusterOptions options, final PcapWriter switchCapture,
        final CounterRegistry counters)
    {
        final LocalCluster cluster = new LocalCluster(options, switchCapture, counters);
        try
        {
            cluster.startRunners();
            for (final AllReduceJob job : cluster.jobs)
            {
                job.awaitJoined();
            }
        }
        catch (final RuntimeException ex)
        {
            cluster.close();
            throw ex;
        }
        return cluster;
    }

    private Transport faulty(final Transport transport, final int node)
    {
        final FaultConfig faults = options.faults();
        return FaultInjectingTransport.wrap(transport, new FaultConfig(faults.dropRate(), faults.duplicateRate(),
            faults.reorderRate(), faults.maxDelayNs(), faults.seed() * 1_000_003L + node));
    }

    private static int inboxBytes(final long wanted)
    {
        final long clamped = Math.max(1 << 18, Math.min(wanted, 1 << 26));
        return (int)Long.highestOneBit(clamped - 1) << 1;
    }

    private void startRunners()
    {
        final int threads = Math.min(options.threads(), workerAgents.size() + 1);
        final List<List<Agent>> groups = new ArrayList<>();
        for (int t = 0; t < threads; t++)
        {
            groups.add(new ArrayList<>());
        }
        groups.get(0).add(killableSwitch);
        for (int w = 0; w < workerAgents.size(); w++)
        {
            groups.get((w + 1) % threads).add(workerAgents.get(w));
        }
        for (final List<Agent> group : groups)
        {
            final AgentRunner runner = new AgentRunner(IdleStrategies.byName(options.idleStrategy()),
                Throwable::printStackTrace, null, new CompositeAgent(group));
            runners.add(runner);
            AgentRunner.startOnThread(runner);
        }
    }

    public ClusterOptions options()
    {
        return options;
    }

    public AllReduceJob worker(final int workerId)
    {
        return jobs.get(workerId);
    }

    /**
     * Makes worker {@code workerId} vanish as a killed process would: its agent stops sending, receiving and
     * answering, without closing anything.
     */
    public void kill(final int workerId)
    {
        ((KillableAgent)workerAgents.get(workerId)).kill();
    }

    /** Makes the switch vanish as a crashed switch would: it stops receiving and sending. */
    public void killSwitch()
    {
        killableSwitch.kill();
    }

    public SoftwareSwitch softwareSwitch()
    {
        return softwareSwitch;
    }

    /** Counters a cluster of {@code workers} workers allocates, at most. */
    public static int countersCapacity(final int workers)
    {
        return 32 + TransportCounter.values().length + 16 * workers;
    }

    public CounterRegistry counters()
    {
        return counters;
    }

    /** Every counter of the cluster with a non-zero value, one per line, summed over workers by type. */
    public String describeCounters()
    {
        final java.util.Map<String, Long> totals = new java.util.LinkedHashMap<>();
        counters.reader().forEach((id, type, key, label) ->
        {
            final long value = counters.reader().getCounterValue(id);
            final String name = label.replaceFirst("^job \\d+ worker \\d+: ", "workers: ");
            totals.merge(name, value, Long::sum);
        });
        final StringBuilder out = new StringBuilder();
        totals.forEach((name, value) ->
        {
            if (value != 0)
            {
                out.append(String.format("%-58s %,d%n", name, value));
            }
        });
        return out.toString();
    }

    /**
     * All-reduces {@code tensors[w]} of every worker w in place, each worker submitting asynchronously, and waits.
     */
    public void allReduce(final float[][] tensors)
    {
        final CompletableFuture<?>[] futures = new CompletableFuture<?>[tensors.length];
        for (int w = 0; w < tensors.length; w++)
        {
            futures[w] = jobs.get(w).allReduceAsync(tensors[w]);
        }
        joinAll(futures);
    }

    /** All-reduces {@code sources[w]} of every worker w into {@code destinations[w]} and waits. */
    public void allReduce(final float[][] sources, final float[][] destinations)
    {
        final CompletableFuture<?>[] futures = new CompletableFuture<?>[sources.length];
        for (int w = 0; w < sources.length; w++)
        {
            futures[w] = jobs.get(w).allReduceAsync(sources[w], destinations[w]);
        }
        joinAll(futures);
    }

    /** Submits {@code operation.apply(w)} on every worker w (any collective of its job) and waits for them all. */
    public void run(final java.util.function.IntFunction<CompletableFuture<?>> operation)
    {
        final CompletableFuture<?>[] futures = new CompletableFuture<?>[jobs.size()];
        for (int w = 0; w < futures.length; w++)
        {
            futures[w] = operation.apply(w);
        }
        joinAll(futures);
    }

    /** Like {@link #allReduce(float[][])} for int32 tensors. */
    public void allReduce(final int[][] tensors)
    {
        final CompletableFuture<?>[] futures = new CompletableFuture<?>[tensors.length];
        for (int w = 0; w < tensors.length; w++)
        {
            futures[w] = jobs.get(w).allReduceAsync(tensors[w]);
        }
        joinAll(futures);
    }

    /**
     * Waits for every future, interruptibly (a test's timeout interrupts the waiting thread; {@code join} would ignore
     * it and let a stuck run outlive its limit), and throws the first failure.
     */
    private static void joinAll(final CompletableFuture<?>[] futures)
    {
        RuntimeException first = null;
        for (final CompletableFuture<?> future : futures)
        {
            try
            {
                future.get();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the workers' all-reduces", ex);
            }
            catch (final java.util.concurrent.ExecutionException ex)
            {
                final RuntimeException cause = ex.getCause() instanceof RuntimeException r ? r
                    : new IllegalStateException(ex.getCause());
                first = first == null ? cause : first;
            }
            catch (final RuntimeException ex)
            {
                first = first == null ? ex : first; // cancelled
            }
        }
        if (first != null)
        {
            throw first;
        }
    }

    /**
     * The threads running the switch and worker agents (every per-packet step happens on them), for allocation and CPU
     * accounting; the calling threads only submit operations and wait.
     */
    public List<Thread> agentThreads()
    {
        final List<Thread> threads = new ArrayList<>();
        for (final AgentRunner runner : runners)
        {
            final Thread thread = runner.thread();
            if (thread != null)
            {
                threads.add(thread);
            }
        }
        return threads;
    }

    @Override
    public void close()
    {
        for (final AgentRunner runner : runners)
        {
            runner.close();
        }
        runners.clear();
        if (dpdkNetwork != null)
        {
            dpdkNetwork.close(); // after the agents closed their transports; throws on an mbuf leak
            dpdkNetwork = null;
        }
    }
}
