package org.inagg.services.esaswitch;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.AgentRunner;
import org.inagg.agent.CounterKey;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.esa.EsaJobConfig;
import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.EsaSwitchSettings;
import org.inagg.p4.esa.EsaWire;
import org.inagg.services.NodeLifecycle;
import org.inagg.services.esaswitch.EsaSwitchContext.JobSpec;
import org.inagg.transport.IdleStrategies;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounters;
import org.inagg.transport.UdpTransport;

/**
 * A running shared-pool switch: its UDP port open, every job's workers and server registered as peers,
 * {@link EsaSwitch} on an agent thread. {@link #launch} starts one from an {@link EsaSwitchContext};
 * {@link #close()} stops the thread (whose agent closes the transport) and the counters; {@link #awaitClose} blocks
 * until then.
 */
public final class EsaSwitchNode implements AutoCloseable
{
    private final EsaSwitchContext context;
    private final UdpTransport udp;
    private final EsaSwitch esaSwitch;
    private final NodeLifecycle lifecycle;

    private EsaSwitchNode(final EsaSwitchContext context, final UdpTransport udp, final EsaSwitch esaSwitch,
        final NodeLifecycle lifecycle)
    {
        this.context = context;
        this.udp = udp;
        this.esaSwitch = esaSwitch;
        this.lifecycle = lifecycle;
    }

    /**
     * Checks the context, opens the UDP port, installs the jobs (each worker's source and the job's server as peers)
     * and starts the agent thread. On any failure what was opened is closed again.
     *
     * @throws IllegalArgumentException from {@link EsaSwitchContext#conclude()}, or when the peer table cannot hold
     *                                  the jobs' peers.
     */
    public static EsaSwitchNode launch(final EsaSwitchContext context)
    {
        context.conclude();
        final int maxLanes = context.jobs().stream().mapToInt(JobSpec::lanes).max().orElseThrow();
        final int maxWorkers = context.jobs().stream().mapToInt(JobSpec::workers).max().orElseThrow();
        final UdpTransport udp = UdpTransport.open(context.bind(), List.of(), context.maxPeers(),
            EsaWire.maxPartialLength(maxLanes, maxWorkers), 64);
        boolean countersOpen = false;
        // What the node runs on (the decorator's, e.g. a pcap capture, which closes the transport it wraps): a launch
        // that fails closes that, so a capture is flushed and closed too.
        Transport decorated = udp;
        try
        {
            final CounterRegistry counters = context.openCounters("udp://" + udp.localAddress().getHostString() + ":"
                + udp.localAddress().getPort());
            countersOpen = true;
            udp.countInto(TransportCounters.in(counters, "esa-switch", CounterKey.NONE, CounterKey.NONE));
            decorated = context.decorator().apply(udp);
            final EsaSwitch esaSwitch = new EsaSwitch(decorated, counters,
                new EsaSwitchSettings(context.aggregators(), maxWorkers, maxLanes, context.mode(), context.policy(),
                    64));
            for (final JobSpec job : context.jobs())
            {
                final InetSocketAddress[] row = context.sources().get(job.jobId());
                final int[] peers = new int[job.workers()];
                for (int w = 0; w < peers.length; w++)
                {
                    peers[w] = register(udp, row[w], "job " + job.jobId() + " worker " + w);
                }
                final int serverPeer = register(udp, context.servers().get(job.jobId()),
                    "job " + job.jobId() + "'s server");
                esaSwitch.addJob(new EsaJobConfig(job.jobId(), job.workers(), job.lanes(), job.window(),
                    job.priority(), peers, serverPeer, job.bytes()));
            }
            final AgentRunner runner = new AgentRunner(IdleStrategies.byName(context.idle(), udp),
                Throwable::printStackTrace, null, esaSwitch);
            AgentRunner.startOnThread(runner);
            return new EsaSwitchNode(context, udp, esaSwitch, new NodeLifecycle(runner, context::closeCounters));
        }
        catch (final RuntimeException ex)
        {
            if (countersOpen)
            {
                context.closeCounters();
            }
            decorated.close();
            throw ex;
        }
    }

    private static int register(final UdpTransport udp, final InetSocketAddress address, final String what)
    {
        final int peer = udp.addPeer(address);
        if (peer < 0)
        {
            throw new IllegalArgumentException("the switch's peer table is full at " + what + " (" + address
                + "); raise --max-peers");
        }
        return peer;
    }

    /** The address it listens on. */
    public InetSocketAddress localAddress()
    {
        return udp.localAddress();
    }

    /** The socket's I/O mode. */
    public String describeIo()
    {
        return udp.describeIo();
    }

    public EsaSwitchContext context()
    {
        return context;
    }

    /** One of the switch's counters. */
    public long counter(final EsaCounter counter)
    {
        return esaSwitch.counter(counter);
    }

    /** The counters line {@code inagg esa-switch} prints. */
    public String describeCounters()
    {
        return String.format(Locale.ROOT, "esa-switch: received %,d, completions %,d, preemptions %,d, collisions %,d,"
                + " tombstoned %,d, retransmits %,d, fallback bytes %,d, joins %,d",
            counter(EsaCounter.RECEIVED), counter(EsaCounter.COMPLETIONS), counter(EsaCounter.PREEMPTIONS),
            counter(EsaCounter.FALLBACK_COLLISION), counter(EsaCounter.FALLBACK_TOMBSTONE),
            counter(EsaCounter.FALLBACK_RETRANSMIT), counter(EsaCounter.FALLBACK_BYTES), counter(EsaCounter.JOINS));
    }

    /** Blocks until {@link #close()} has run (from any thread) or the timeout passes; true if closed. */
    public boolean awaitClose(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        return lifecycle.awaitClose(timeout, unit);
    }

    /** Stops the agent thread (its agent closes the transport), then the counters. Once; later calls return. */
    @Override
    public void close()
    {
        lifecycle.close();
    }
}
