package org.inagg.services.ps;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import org.inagg.agent.CounterRegistry;
import org.inagg.transport.IdleStrategies;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.UdpTransport;

/**
 * The settings of one parameter server: where it listens, its job, every worker's address (where results go), and
 * optionally the ATP switch that results go through. {@link #conclude()} fills defaults and checks the whole once.
 */
public final class ParameterServerContext
{
    /** Default UDP address. */
    public static final InetSocketAddress BIND_DEFAULT = new InetSocketAddress("0.0.0.0", 9100);
    /** Default most peer addresses. */
    public static final int MAX_PEERS_DEFAULT = 4096;

    private InetSocketAddress bind = BIND_DEFAULT;
    private SwitchJobConfig job;
    private List<InetSocketAddress> workers;
    private InetSocketAddress resultsVia;
    private int maxPeers = MAX_PEERS_DEFAULT;
    private String idle = IdleStrategies.SERVICE_DEFAULT;
    private Function<UdpTransport, Transport> decorator = udp -> udp;
    private Function<String, CounterRegistry> counters = label -> new CounterRegistry(64 + TransportCounter.values().length);
    private Runnable countersClose = () -> { };

    /** UDP address to listen on (default 0.0.0.0:9100). */
    public ParameterServerContext bind(final InetSocketAddress bind)
    {
        this.bind = bind;
        return this;
    }

    /** The job, as the switches below have it. */
    public ParameterServerContext job(final SwitchJobConfig job)
    {
        this.job = job;
        return this;
    }

    /** Every worker's UDP address, in worker id order. */
    public ParameterServerContext workers(final List<InetSocketAddress> workers)
    {
        this.workers = List.copyOf(workers);
        return this;
    }

    /** ATP: the switch every result goes through (it frees its aggregator and multicasts); null: straight out. */
    public ParameterServerContext resultsVia(final InetSocketAddress resultsVia)
    {
        this.resultsVia = resultsVia;
        return this;
    }

    /** Most peer addresses of the UDP transport (at least the workers and two more). */
    public ParameterServerContext maxPeers(final int maxPeers)
    {
        this.maxPeers = maxPeers;
        return this;
    }

    /** Idle strategy by name ({@link IdleStrategies#NAMES}). */
    public ParameterServerContext idle(final String idle)
    {
        this.idle = idle;
        return this;
    }

    /** What the server sends and receives through, given its UDP transport (loss injection, capture). */
    public ParameterServerContext decorator(final Function<UdpTransport, Transport> decorator)
    {
        this.decorator = decorator;
        return this;
    }

    /**
     * Where its counters go (with room for its transport's), given the label naming the server and its address, and
     * what closes them when the node closes (a counters file).
     */
    public ParameterServerContext counters(final Function<String, CounterRegistry> counters, final Runnable close)
    {
        this.counters = counters;
        this.countersClose = close;
        return this;
    }

    /**
     * Checks the settings; every launch checks them again, so a setter called after a check is checked too.
     *
     * @throws IllegalArgumentException naming what is missing or does not fit.
     */
    public ParameterServerContext conclude()
    {
        Objects.requireNonNull(bind, "bind");
        if (job == null)
        {
            throw new IllegalArgumentException("a parameter server needs its job");
        }
        if (workers == null || workers.size() != job.workers())
        {
            throw new IllegalArgumentException("--workers-at lists " + (workers == null ? 0 : workers.size())
                + " addresses for the " + job.workers() + " workers of job " + job.jobId());
        }
        if (maxPeers < 1)
        {
            throw new IllegalArgumentException("--max-peers must be at least 1, not " + maxPeers);
        }
        IdleStrategies.byName(idle);
        return this;
    }

    public InetSocketAddress bind()
    {
        return bind;
    }

    public SwitchJobConfig job()
    {
        return job;
    }

    public List<InetSocketAddress> workers()
    {
        return workers;
    }

    public InetSocketAddress resultsVia()
    {
        return resultsVia;
    }

    public int maxPeers()
    {
        return maxPeers;
    }

    public String idle()
    {
        return idle;
    }

    Function<UdpTransport, Transport> decorator()
    {
        return decorator;
    }

    CounterRegistry openCounters(final String label)
    {
        return counters.apply(label);
    }

    void closeCounters()
    {
        countersClose.run();
    }
}
