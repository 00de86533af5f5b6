package org.inagg.services.softswitch;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.inagg.agent.CounterKey;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.p4.softswitch.UpstreamAggregation;
import org.inagg.services.NodeLifecycle;
import org.inagg.services.softswitch.SwitchContext.OpenedTransport;
import org.inagg.services.switchcontrol.SwitchControlServer;
import org.inagg.transport.IdleStrategies;
import org.inagg.transport.ReusePortSteering;
import org.inagg.transport.SourceRegistry;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounters;
import org.inagg.transport.UdpTransport;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.wire.InaggHeader;

/**
 * A running software switch: its transport open (a UDP port, or what the context's opener gave), the jobs of its
 * context installed with their registered sources, {@link SoftwareSwitch} (and the control port, if any) on one agent
 * thread; with {@link SwitchContext#shards} N, N of each (socket, switch, thread), each job on shard job id % N.
 * {@link #launch} starts one from a {@link SwitchContext}; {@link #close()} stops the threads (whose agents close the
 * transports), the control port and the counters; {@link #awaitClose} blocks until then.
 */
public final class SwitchNode implements AutoCloseable
{
    /**
     * Placeholder source of a worker this switch does not serve ({@code --upstream}): its packets are refused as
     * another switch's worker before any source is compared, and no transport numbers a peer this high.
     */
    public static final int NOT_SERVED_PEER = Integer.MAX_VALUE;

    private final SwitchContext context;
    /** Shard 0's transport (the only one without shards). */
    private final OpenedTransport transport;
    /** Each shard's switch, its jobs those of job id % shards. */
    private final List<SoftwareSwitch> shards;
    private final List<SwitchJobConfig> jobs;
    private final SwitchControlServer controlServer;
    private final NodeLifecycle lifecycle;

    private SwitchNode(final SwitchContext context, final OpenedTransport transport, final List<SoftwareSwitch> shards,
        final List<SwitchJobConfig> jobs, final SwitchControlServer controlServer, final NodeLifecycle lifecycle)
    {
        this.context = context;
        this.transport = transport;
        this.shards = shards;
        this.jobs = jobs;
        this.controlServer = controlServer;
        this.lifecycle = lifecycle;
    }

    /**
     * Checks the context, opens the transport (with {@code --upstream} the parameter server is its peer 0; with
     * {@link SwitchContext#shards} one socket a shard on the same port), registers the jobs' sources, opens the
     * control port and starts the agent thread (one a shard). On any failure what was opened is closed again.
     *
     * @throws IllegalArgumentException from {@link SwitchContext#conclude()}, or when the peer table cannot hold the
     *                                  registered sources.
     * @throws IllegalStateException    when the shards' sockets cannot be steered by job (no batch I/O, or the
     *                                  kernel refused the program).
     */
    public static SwitchNode launch(final SwitchContext context)
    {
        context.conclude();
        final List<OpenedTransport> opened = open(context);
        SwitchControlServer controlServer = null;
        boolean countersOpen = false;
        // What the node runs on (the decorator's, e.g. a pcap capture, which closes the transport it wraps): a launch
        // that fails closes that, so a capture is flushed and closed too.
        final List<Transport> decorated = new ArrayList<>(opened.stream().map(OpenedTransport::transport).toList());
        // Shard i's runner, once started, closes decorated.get(i).
        final List<AgentRunner> started = new ArrayList<>();
        try
        {
            final CounterRegistry counters = context.openCounters(opened.get(0).name());
            countersOpen = true;
            final List<SoftwareSwitch> shards = new ArrayList<>();
            for (int shard = 0; shard < opened.size(); shard++)
            {
                final OpenedTransport shardTransport = opened.get(shard);
                // Shards count apart, each under its own name (inagg stat); /metrics sums them.
                final String owner = opened.size() == 1 ? "switch" : "switch shard " + shard;
                shardTransport.transport().countInto(TransportCounters.in(counters, owner, CounterKey.NONE,
                    CounterKey.NONE));
                decorated.set(shard, context.decorator().apply(shard, shardTransport.transport(),
                    shardTransport.headers()));
                shards.add(new SoftwareSwitch(decorated.get(shard), counters, 256, owner));
            }
            final List<SwitchJobConfig> jobs = new ArrayList<>();
            for (final SwitchJobConfig config : context.jobs())
            {
                final int shard = ReusePortSteering.shardOf(config.jobId(), shards.size());
                final SwitchJobConfig job = withRegisteredSources(config, context.sources().get(config.jobId()),
                    opened.get(shard).sources());
                jobs.add(job);
                shards.get(shard).addJob(job, context.upstream() == null ? null
                    : new UpstreamAggregation(0, context.localWorkers(), context.resultsDown()));
            }
            if (context.control() != null)
            {
                // Each shard applies the controller's requests for its jobs on its own thread.
                controlServer = SwitchControlServer.launch(new SwitchControlServer.Context()
                    .shards(shards, opened.stream().map(OpenedTransport::sources).toList()).token(context.token())
                    .defaultLanes(context.defaultLanes())
                    .bind(context.control()));
            }
            final List<AgentRunner> runners = new ArrayList<>();
            for (int shard = 0; shard < shards.size(); shard++)
            {
                final Agent agent = controlServer != null
                    ? new CompositeAgent(shards.get(shard), controlServer.agent(shard)) : shards.get(shard);
                runners.add(new AgentRunner(IdleStrategies.byName(context.idle(), opened.get(shard).transport()),
                    Throwable::printStackTrace, null, agent));
            }
            for (final AgentRunner runner : runners)
            {
                AgentRunner.startOnThread(runner);
                started.add(runner);
            }
            // The control port first (no request then waits on a stopped shard), then the last shard's thread (each
            // closes its transport), the others back to shard 0, the counters: a socket leaving a SO_REUSEPORT group
            // moves the group's last one into its place, so closing from the last keeps every open shard's index,
            // and no job's datagrams reach another shard.
            final List<Runnable> afterControl = new ArrayList<>();
            for (int shard = runners.size() - 1; shard >= 0; shard--)
            {
                afterControl.add(runners.get(shard)::close);
            }
            afterControl.add(context::closeCounters);
            final SwitchControlServer control = controlServer;
            return new SwitchNode(context, opened.get(0), shards, List.copyOf(jobs), controlServer,
                new NodeLifecycle(control == null ? () -> { } : control::close,
                    afterControl.toArray(Runnable[]::new)));
        }
        catch (final RuntimeException | Error ex)
        {
            // An Error too: a thread that cannot be created (many shards, a low ulimit -u) leaves the others running.
            for (int shard = started.size() - 1; shard >= 0; shard--)
            {
                try
                {
                    started.get(shard).close();
                }
                catch (final RuntimeException closing)
                {
                    ex.addSuppressed(closing);
                }
            }
            if (controlServer != null)
            {
                controlServer.close();
            }
            if (countersOpen)
            {
                context.closeCounters();
            }
            decorated.subList(started.size(), decorated.size()).forEach(Transport::close);
            throw ex;
        }
    }

    private static List<OpenedTransport> open(final SwitchContext context)
    {
        if (context.transportOpener() != null)
        {
            return List.of(context.transportOpener().open(context.maxMessageLength(), context.maxPeers(),
                context.maxLearnedPeers()));
        }
        if (context.shards() == 1)
        {
            return List.of(opened(UdpTransport.open(context.bind(),
                context.upstream() == null ? List.of() : List.of(context.upstream()), context.maxPeers(),
                context.maxLearnedPeers(), context.maxMessageLength(), 64)));
        }
        // A port another process's sockets share already (SO_REUSEPORT, same user) would take this group's sockets
        // into theirs, and the kernel hands such a port out for port 0 too: a plain socket on the port first (for port
        // 0, the port it got), as without shards, says whether anything holds it.
        final InetSocketAddress port;
        try (UdpTransport probe = UdpTransport.open(context.bind(), List.of(), 1, 1, 1))
        {
            port = probe.localAddress();
        }
        final List<OpenedTransport> shards = new ArrayList<>();
        try
        {
            final UdpTransport first = UdpTransport.openSharingPort(port, context.maxPeers(),
                context.maxLearnedPeers(), context.maxMessageLength(), 64);
            shards.add(opened(first));
            final String why = first.steer(ReusePortSteering.byJob(context.shards()));
            if (why != null)
            {
                throw new IllegalStateException("--shards " + context.shards() + ": cannot have the kernel steer "
                    + shards.get(0).name() + "'s datagrams by job: " + why);
            }
            for (int shard = 1; shard < context.shards(); shard++)
            {
                final UdpTransport next = UdpTransport.openSharingPort(port, context.maxPeers(),
                    context.maxLearnedPeers(), context.maxMessageLength(), 64);
                shards.add(opened(next));
                if (!next.batchIo())
                {
                    throw new IllegalStateException("--shards " + context.shards() + ": shard " + shard
                        + "'s socket cannot use batch I/O (" + next.describeIo() + ")");
                }
            }
            // Until the last socket was bound, a job of a shard not yet bound was hashed to another shard's socket,
            // whose switch would refuse its JOIN as an unknown job's: dropped here, the workers send them again, and
            // the senders these datagrams made learned peers are forgotten (no source is registered yet).
            for (final OpenedTransport shard : shards)
            {
                final java.util.BitSet learned = new java.util.BitSet();
                for (int polls = 0; polls < 1024 && shard.transport().poll((m, o, length, peer) ->
                {
                    if (peer >= 0)
                    {
                        learned.set(peer);
                    }
                }, 64) > 0; polls++)
                {
                    // discarded
                }
                learned.stream().forEach(peer -> shard.sources().removePeer(peer));
            }
            return shards;
        }
        catch (final RuntimeException ex)
        {
            shards.forEach(shard -> shard.transport().close());
            throw ex;
        }
    }

    private static OpenedTransport opened(final UdpTransport udp)
    {
        return new OpenedTransport(udp, udp, FrameHeaders.udp(udp),
            "udp://" + udp.localAddress().getHostString() + ":" + udp.localAddress().getPort());
    }

    private static SwitchJobConfig withRegisteredSources(
        final SwitchJobConfig config, final InetSocketAddress[] sources, final SourceRegistry registry)
    {
        if (sources == null)
        {
            return config;
        }
        final int[] peers = new int[sources.length];
        for (int w = 0; w < sources.length; w++)
        {
            if (sources[w] == null)
            {
                peers[w] = NOT_SERVED_PEER; // Admission: only a worker this --upstream switch does not serve
                continue;
            }
            peers[w] = registry.addPeer(sources[w]);
            if (peers[w] < 0)
            {
                throw new IllegalArgumentException("job " + config.jobId() + ": the switch's peer table is full at "
                    + "worker " + w + "'s source " + sources[w] + "; raise --max-peers");
            }
        }
        return new SwitchJobConfig(config.jobId(), config.workers(), config.slots(), config.lanesPerPacket(),
            SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP, peers, config.session());
    }

    /** The UDP address it listens on; null on a transport its context's opener gave. */
    public InetSocketAddress localAddress()
    {
        return transport.transport() instanceof UdpTransport udp && context.transportOpener() == null
            ? udp.localAddress() : null;
    }

    /** Where it listens: {@code udp://HOST:PORT} or the opened transport's name. */
    public String where()
    {
        return transport.name();
    }

    /** The HTTP address of its control port; null without one. */
    public InetSocketAddress controlAddress()
    {
        return controlServer == null ? null : controlServer.address();
    }

    /** The jobs it was started with, each with the peers its registered sources got. */
    public List<SwitchJobConfig> jobs()
    {
        return jobs;
    }

    public SwitchContext context()
    {
        return context;
    }

    /** One of the switch's counters, summed over its shards. */
    public long counter(final SwitchCounter counter)
    {
        long total = 0;
        for (final SoftwareSwitch shard : shards)
        {
            total += shard.counter(counter);
        }
        return total;
    }

    /** One of the switch's counters in shard {@code shard} ({@link SwitchContext#shards}) alone. */
    public long counter(final SwitchCounter counter, final int shard)
    {
        return shards.get(shard).counter(counter);
    }

    /**
     * On UDP: the socket's I/O mode and buffers, and a warning for each job whose window (every worker's slots in
     * flight at once) exceeds half the receive buffer, beyond which the kernel drops. Nothing on another transport.
     */
    public List<String> transportNotes()
    {
        final List<String> notes = new ArrayList<>();
        if (context.transportOpener() == null && transport.transport() instanceof UdpTransport udp)
        {
            notes.add(udp.describeIo());
            notes.add(udp.describeBuffers() + (shards.size() == 1 ? "" : ", each of " + shards.size() + " sockets"));
            if (shards.size() > 1)
            {
                notes.add(describeShards(udp.localAddress().getPort()));
            }
            for (final SwitchJobConfig job : jobs)
            {
                final int packet = InaggHeader.messageLength(job.lanesPerPacket());
                final long window = (long)job.workers() * job.slots() * packet;
                if (window > udp.receiveBufferBytes() / 2)
                {
                    notes.add(String.format("warning: job %d can have %,d bytes in flight (%d workers x %d slots x "
                            + "%d-byte packets), more than half the %,d-byte receive buffer: expect drops and "
                            + "retransmissions; fewer slots, or raise net.core.rmem_max", job.jobId(), window,
                        job.workers(), job.slots(), packet, udp.receiveBufferBytes()));
                }
            }
        }
        return notes;
    }

    /** Where each of the --job jobs runs, with a warning when they share a shard while another has none. */
    private String describeShards(final int port)
    {
        final StringBuilder placed = new StringBuilder();
        final java.util.BitSet used = new java.util.BitSet();
        for (final SwitchJobConfig job : jobs)
        {
            final int shard = ReusePortSteering.shardOf(job.jobId(), shards.size());
            used.set(shard);
            placed.append(placed.isEmpty() ? "" : ", ").append("job ").append(job.jobId()).append(" on shard ")
                .append(shard);
        }
        return "shards: " + shards.size() + " threads, each with its own socket on port " + port + " (SO_REUSEPORT);"
            + " the kernel steers each job's datagrams to shard job id % " + shards.size() + ": "
            + (placed.isEmpty() ? "the controller's jobs as it adds them" : placed)
            + (used.cardinality() < Math.min(jobs.size(), shards.size())
            ? " (warning: jobs share a shard while another has none; job ids in sequence spread them)" : "");
    }

    /** The counters line {@code inagg switch} prints every --stats-interval. */
    public String describeCounters()
    {
        return String.format("switch: received %,d, contributions %,d, results %,d, retransmit replies %,d, partials up"
                + " %,d, forwarded up %,d, dropped %,d", counter(SwitchCounter.RECEIVED),
            counter(SwitchCounter.CONTRIBUTIONS), counter(SwitchCounter.RESULTS_SENT),
            counter(SwitchCounter.RETRANSMIT_REPLIES), counter(SwitchCounter.UPSTREAM_PARTIALS),
            counter(SwitchCounter.UPSTREAM_FORWARDS), dropped());
    }

    private long dropped()
    {
        long total = 0;
        for (final SwitchCounter counter : SwitchCounter.values())
        {
            if (counter.name().startsWith("DROP_"))
            {
                total += counter(counter);
            }
        }
        return total;
    }

    /** Blocks until {@link #close()} has run (from any thread) or the timeout passes; true if closed. */
    public boolean awaitClose(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        return lifecycle.awaitClose(timeout, unit);
    }

    /**
     * Stops the agent threads (each agent closes its transport; the last shard's first), then the control port and the
     * counters. Once; a second call, from any thread, returns at once.
     */
    @Override
    public void close()
    {
        lifecycle.close();
    }
}
