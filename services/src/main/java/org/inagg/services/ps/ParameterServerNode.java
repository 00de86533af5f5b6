package org.inagg.services.ps;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.AgentRunner;
import org.inagg.agent.CounterKey;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.NodeLifecycle;
import org.inagg.transport.IdleStrategies;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounters;
import org.inagg.transport.UdpTransport;

/**
 * A running parameter server: its UDP port open, {@link ParameterServer} on an agent thread. {@link #launch} starts
 * one from a {@link ParameterServerContext}; {@link #close()} stops the thread (whose agent closes the transport) and
 * the counters; {@link #awaitClose} blocks until then.
 */
public final class ParameterServerNode implements AutoCloseable
{
    private final ParameterServerContext context;
    private final UdpTransport udp;
    private final ParameterServer server;
    private final NodeLifecycle lifecycle;

    private ParameterServerNode(final ParameterServerContext context, final UdpTransport udp,
        final ParameterServer server, final NodeLifecycle lifecycle)
    {
        this.context = context;
        this.udp = udp;
        this.server = server;
        this.lifecycle = lifecycle;
    }

    /**
     * Checks the context, opens the UDP port (the workers, then the ATP switch if any, as its first peers), installs
     * the job and starts the server's agent thread. On any failure what was opened is closed again.
     *
     * @throws IllegalArgumentException from {@link ParameterServerContext#conclude()}.
     */
    public static ParameterServerNode launch(final ParameterServerContext context)
    {
        context.conclude();
        final SwitchJobConfig job = context.job();
        final List<InetSocketAddress> workers = context.workers();
        final List<InetSocketAddress> known = new ArrayList<>(workers);
        if (context.resultsVia() != null)
        {
            known.add(context.resultsVia()); // peer W: the switch
        }
        final UdpTransport udp = UdpTransport.open(context.bind(), known,
            Math.max(context.maxPeers(), workers.size() + 2),
            EsaWire.maxPartialLength(job.lanesPerPacket(), job.workers()),
            64);
        boolean countersOpen = false;
        // What the node runs on (the decorator's, e.g. a pcap capture, which closes the transport it wraps): a launch
        // that fails closes that, so a capture is flushed and closed too.
        Transport decorated = udp;
        try
        {
            final int[] peers = new int[job.workers()];
            for (int w = 0; w < peers.length; w++)
            {
                peers[w] = w;
            }
            final CounterRegistry counters = context.openCounters("ps udp://" + udp.localAddress().getHostString()
                + ":" + udp.localAddress().getPort() + " job " + job.jobId());
            countersOpen = true;
            udp.countInto(TransportCounters.in(counters, "ps", CounterKey.NONE, CounterKey.NONE));
            decorated = context.decorator().apply(udp);
            final ParameterServer server = new ParameterServer(decorated, counters, 256, 2 * job.slots());
            server.addJob(new ServerJobConfig(job.jobId(), job.workers(), peers,
                context.resultsVia() == null ? 0 : workers.size(), context.resultsVia() != null, job.slots(),
                job.lanesPerPacket()));
            final AgentRunner runner = new AgentRunner(IdleStrategies.byName(context.idle(), udp),
                Throwable::printStackTrace, null, server);
            AgentRunner.startOnThread(runner);
            return new ParameterServerNode(context, udp, server, new NodeLifecycle(runner, context::closeCounters));
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

    /** The address it listens on. */
    public InetSocketAddress localAddress()
    {
        return udp.localAddress();
    }

    public ParameterServerContext context()
    {
        return context;
    }

    /** One of the server's counters. */
    public long counter(final ServerCounter counter)
    {
        return server.counter(counter);
    }

    /** The counters line {@code inagg ps} prints. */
    public String describeCounters()
    {
        return String.format("ps: received %,d, partials merged %,d, raw merged %,d, blocks completed %,d, results %,d,"
                + " retransmissions answered %,d, joins %,d", server.counter(ServerCounter.RECEIVED),
            server.counter(ServerCounter.PARTIALS_MERGED), server.counter(ServerCounter.RAW_MERGED),
            server.counter(ServerCounter.COMPLETED), server.counter(ServerCounter.RESULTS_SENT),
            server.counter(ServerCounter.RETRANSMIT_REPLIES), server.counter(ServerCounter.JOINS));
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
