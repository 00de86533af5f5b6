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
import org.inagg.transport.SourceRegistry;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounters;
import org.inagg.transport.UdpTransport;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.wire.InaggHeader;

/**
 * A running software switch: its transport open (a UDP port, or what the context's opener gave), the jobs of its
 * context installed with their registered sources, {@link SoftwareSwitch} (and the control port, if any) on one agent
 * thread. {@link #launch} starts one from a {@link SwitchContext}; {@link #close()} stops the thread (whose agent
 * closes the transport), the control port and the counters; {@link #awaitClose} blocks until then.
 */
public final class SwitchNode implements AutoCloseable
{
    /**
     * Placeholder source of a worker this switch does not serve ({@code --upstream}): its packets are refused as
     * another switch's worker before any source is compared, and no transport numbers a peer this high.
     */
    public static final int NOT_SERVED_PEER = Integer.MAX_VALUE;

    private final SwitchContext context;
    private final OpenedTransport transport;
    private final SoftwareSwitch softwareSwitch;
    private final List<SwitchJobConfig> jobs;
    private final SwitchControlServer controlServer;
    private final NodeLifecycle lifecycle;

    private SwitchNode(final SwitchContext context, final OpenedTransport transport,
        final SoftwareSwitch softwareSwitch, final List<SwitchJobConfig> jobs, final SwitchControlServer controlServer,
        final NodeLifecycle lifecycle)
    {
        this.context = context;
        this.transport = transport;
        this.softwareSwitch = softwareSwitch;
        this.jobs = jobs;
        this.controlServer = controlServer;
        this.lifecycle = lifecycle;
    }

    /**
     * Checks the context, opens the transport (with {@code --upstream} the parameter server is its peer 0), registers
     * the jobs' sources, opens the control port and starts the agent thread. On any failure what was opened is
     * closed again.
     *
     * @throws IllegalArgumentException from {@link SwitchContext#conclude()}, or when the peer table cannot hold the
     *                                  registered sources.
     */
    public static SwitchNode launch(final SwitchContext context)
    {
        context.conclude();
        final OpenedTransport opened = open(context);
        SwitchControlServer controlServer = null;
        boolean countersOpen = false;
        // What the node runs on (the decorator's, e.g. a pcap capture, which closes the transport it wraps): a launch
        // that fails closes that, so a capture is flushed and closed too.
        Transport decorated = opened.transport();
        try
        {
            final CounterRegistry counters = context.openCounters(opened.name());
            countersOpen = true;
            opened.transport().countInto(TransportCounters.in(counters, "switch", CounterKey.NONE, CounterKey.NONE));
            final List<SwitchJobConfig> jobs = context.jobs().stream()
                .map(job -> withRegisteredSources(job, context.sources().get(job.jobId()), opened.sources())).toList();
            decorated = context.decorator().apply(opened.transport(), opened.headers());
            final SoftwareSwitch softwareSwitch = new SoftwareSwitch(decorated, counters, 256);
            for (final SwitchJobConfig job : jobs)
            {
                softwareSwitch.addJob(job, context.upstream() == null ? null
                    : new UpstreamAggregation(0, context.localWorkers(), context.resultsDown()));
            }
            if (context.control() != null)
            {
                controlServer = SwitchControlServer.launch(new SwitchControlServer.Context()
                    .softwareSwitch(softwareSwitch).token(context.token()).transport(opened.sources())
                    .bind(context.control()));
            }
            final Agent agent = controlServer == null ? softwareSwitch
                : new CompositeAgent(softwareSwitch, controlServer);
            final AgentRunner runner = new AgentRunner(IdleStrategies.byName(context.idle(), opened.transport()),
                Throwable::printStackTrace, null, agent);
            AgentRunner.startOnThread(runner);
            final Runnable closeControl = controlServer == null ? () -> { } : controlServer::close;
            return new SwitchNode(context, opened, softwareSwitch, jobs, controlServer,
                new NodeLifecycle(runner, closeControl, context::closeCounters));
        }
        catch (final RuntimeException ex)
        {
            if (controlServer != null)
            {
                controlServer.close();
            }
            if (countersOpen)
            {
                context.closeCounters();
            }
            decorated.close();
            throw ex;
        }
    }

    private static OpenedTransport open(final SwitchContext context)
    {
        if (context.transportOpener() != null)
        {
            return context.transportOpener().open(context.maxMessageLength(), context.maxPeers(),
                context.maxLearnedPeers());
        }
        final UdpTransport udp = UdpTransport.open(context.bind(),
            context.upstream() == null ? List.of() : List.of(context.upstream()), context.maxPeers(),
            context.maxLearnedPeers(), context.maxMessageLength(), 64);
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

    /** One of the switch's counters. */
    public long counter(final SwitchCounter counter)
    {
        return softwareSwitch.counter(counter);
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
            notes.add(udp.describeBuffers());
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
                total += softwareSwitch.counter(counter);
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
     * Stops the agent thread (its agent closes the transport), then the control port and the counters. Once; a
     * second call, from any thread, returns at once.
     */
    @Override
    public void close()
    {
        lifecycle.close();
    }
}
