package org.inagg.services.esaswitch;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.softswitch.Admission;
import org.inagg.transport.IdleStrategies;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.UdpTransport;

/**
 * The settings of one shared-pool switch (ESA or ATP, docs/esa.md): its pool, how it allocates and ranks, its jobs
 * with every worker's source and each job's parameter server. {@link #conclude()} checks the whole once.
 */
public final class EsaSwitchContext
{
    /** Default UDP address. */
    public static final InetSocketAddress BIND_DEFAULT = new InetSocketAddress("0.0.0.0", 9000);
    /** Default aggregators in the pool. */
    public static final int AGGREGATORS_DEFAULT = 64;
    /** Most aggregators in the pool. */
    public static final int MAX_AGGREGATORS = 1 << 20;
    /** Default most peer addresses. */
    public static final int MAX_PEERS_DEFAULT = 4096;

    /** One job: its table row before transport peers are known. */
    public record JobSpec(int jobId, int workers, int window, int lanes, int priority, long bytes)
    {
        SwitchJobConfig asSlotJob()
        {
            return new SwitchJobConfig(jobId, workers, window, lanes);
        }
    }

    private InetSocketAddress bind = BIND_DEFAULT;
    private int aggregators = AGGREGATORS_DEFAULT;
    private AllocationMode mode = AllocationMode.PREEMPTIVE;
    private PriorityPolicy policy = PriorityPolicy.JOB_TABLE;
    private List<JobSpec> jobs = List.of();
    private Map<Integer, InetSocketAddress[]> sources = Map.of();
    private Map<Integer, InetSocketAddress> servers = Map.of();
    private int maxPeers = MAX_PEERS_DEFAULT;
    private String idle = IdleStrategies.SERVICE_DEFAULT;
    private Function<UdpTransport, Transport> decorator = udp -> udp;
    private Function<String, CounterRegistry> counters =
        where -> new CounterRegistry(64 + TransportCounter.values().length);
    private Runnable countersClose = () -> { };

    /** UDP address to listen on (default 0.0.0.0:9000). */
    public EsaSwitchContext bind(final InetSocketAddress bind)
    {
        this.bind = bind;
        return this;
    }

    /** Aggregators in the pool every job shares. */
    public EsaSwitchContext aggregators(final int aggregators)
    {
        this.aggregators = aggregators;
        return this;
    }

    /** ESA (free an aggregator when its sum leaves, preempt by priority) or ATP (hold it until the result). */
    public EsaSwitchContext mode(final AllocationMode mode)
    {
        this.mode = mode;
        return this;
    }

    /** Where priorities come from. */
    public EsaSwitchContext policy(final PriorityPolicy policy)
    {
        this.policy = policy;
        return this;
    }

    /** Its jobs. */
    public EsaSwitchContext jobs(final List<JobSpec> jobs)
    {
        this.jobs = List.copyOf(jobs);
        return this;
    }

    /** Every worker's source by job id, indexed by worker id: JOINs are answered only from there. */
    public EsaSwitchContext sources(final Map<Integer, InetSocketAddress[]> sources)
    {
        this.sources = Map.copyOf(sources);
        return this;
    }

    /** Each job's parameter server by job id. */
    public EsaSwitchContext servers(final Map<Integer, InetSocketAddress> servers)
    {
        this.servers = Map.copyOf(servers);
        return this;
    }

    /** Most peer addresses of the UDP transport. */
    public EsaSwitchContext maxPeers(final int maxPeers)
    {
        this.maxPeers = maxPeers;
        return this;
    }

    /** Idle strategy by name ({@link IdleStrategies#NAMES}). */
    public EsaSwitchContext idle(final String idle)
    {
        this.idle = idle;
        return this;
    }

    /** What the switch sends and receives through, given its UDP transport (loss injection, capture). */
    public EsaSwitchContext decorator(final Function<UdpTransport, Transport> decorator)
    {
        this.decorator = decorator;
        return this;
    }

    /**
     * Where its counters go (with room for its transport's), given where it listens ({@code udp://HOST:PORT}), and
     * what closes them when the node closes (a counters file).
     */
    public EsaSwitchContext counters(final Function<String, CounterRegistry> counters, final Runnable close)
    {
        this.counters = counters;
        this.countersClose = close;
        return this;
    }

    /**
     * Checks the settings; every launch checks them again, so a setter called after a check is checked too.
     *
     * @throws IllegalArgumentException naming the option that is missing or does not fit.
     */
    public EsaSwitchContext conclude()
    {
        Objects.requireNonNull(bind, "bind");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(policy, "policy");
        if (aggregators < 1 || aggregators > MAX_AGGREGATORS)
        {
            throw new IllegalArgumentException("--aggregators must be in 1.." + MAX_AGGREGATORS + ", got "
                + aggregators);
        }
        if (jobs.isEmpty())
        {
            throw new IllegalArgumentException("an ESA switch needs at least one --job");
        }
        Admission.check(jobs.stream().map(JobSpec::asSlotJob).toList(), sources, false, null);
        for (final JobSpec job : jobs)
        {
            if (!servers.containsKey(job.jobId()))
            {
                throw new IllegalArgumentException("job " + job.jobId() + " has no parameter server: give --server "
                    + job.jobId() + "=HOST:PORT (an `inagg ps` for it)");
            }
        }
        if (maxPeers < 1)
        {
            throw new IllegalArgumentException("--max-peers must be at least 1, got " + maxPeers);
        }
        IdleStrategies.byName(idle);
        return this;
    }

    public InetSocketAddress bind()
    {
        return bind;
    }

    public int aggregators()
    {
        return aggregators;
    }

    public AllocationMode mode()
    {
        return mode;
    }

    public PriorityPolicy policy()
    {
        return policy;
    }

    public List<JobSpec> jobs()
    {
        return jobs;
    }

    public Map<Integer, InetSocketAddress[]> sources()
    {
        return sources;
    }

    public Map<Integer, InetSocketAddress> servers()
    {
        return servers;
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

    CounterRegistry openCounters(final String where)
    {
        return counters.apply(where);
    }

    void closeCounters()
    {
        countersClose.run();
    }
}
