package org.inagg.services.softswitch;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.http.ApiToken;
import org.inagg.transport.IdleStrategies;
import org.inagg.transport.ReusePortSteering;
import org.inagg.transport.SourceRegistry;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.wire.InaggHeader;

/**
 * The settings of one software switch: its jobs and their workers' sources (admission), where it listens (a UDP port,
 * or a transport it is given, DPDK), its control port for the controller, and two-level aggregation up to a parameter
 * server. {@link #conclude()} checks the whole once, before any port or DPDK's EAL is taken.
 */
public final class SwitchContext
{
    /** Default UDP address. */
    public static final InetSocketAddress BIND_DEFAULT = new InetSocketAddress("0.0.0.0", 9000);
    /** Default most peer addresses. */
    public static final int MAX_PEERS_DEFAULT = 4096;
    /** Lanes per packet the transport is sized for when no job says more. */
    public static final int LANES_DEFAULT = 256;

    /** Opens the transport of a switch that does not run on a UDP port of its own (DPDK). */
    @FunctionalInterface
    public interface TransportOpener
    {
        /**
         * @param maxLearnedPeers most peers learned from strangers' datagrams, of {@code maxPeers}: under a controller
         *                        the rest stays free for the sources it registers.
         */
        OpenedTransport open(int maxMessageLength, int maxPeers, int maxLearnedPeers);
    }

    /**
     * A transport a {@link TransportOpener} opened: what the switch sends through (and closes when its agent stops),
     * where it registers its workers' sources, how a capture frames its messages, and its name in labels.
     */
    public record OpenedTransport(Transport transport, SourceRegistry sources, FrameHeaders headers, String name)
    {
    }

    /** What a shard of the switch sends and receives through, given its transport (loss, capture). */
    @FunctionalInterface
    public interface Decorator
    {
        /** @param shard the shard's number (0 without shards): e.g. a loss injector's seed, so shards lose apart. */
        Transport apply(int shard, Transport transport, FrameHeaders headers);
    }

    /** Counters a shard registers at most: the switch's own and its transport's. */
    public static final int COUNTERS_PER_SHARD = 64 + TransportCounter.values().length;

    private InetSocketAddress bind = BIND_DEFAULT;
    private List<SwitchJobConfig> jobs = List.of();
    private Map<Integer, InetSocketAddress[]> sources = Map.of();
    private boolean open;
    private InetSocketAddress control;
    private ApiToken token = ApiToken.NONE;
    private InetSocketAddress upstream;
    private int[] localWorkers;
    private boolean resultsDown = true;
    private int maxPeers = MAX_PEERS_DEFAULT;
    private String idle = IdleStrategies.SERVICE_DEFAULT;
    private int shards = 1;
    private int defaultLanes = LANES_DEFAULT;
    private TransportOpener transportOpener;
    private Decorator decorator = (shard, transport, headers) -> transport;
    private Function<String, CounterRegistry> counters =
        where -> new CounterRegistry(countersCapacity());
    private Runnable countersClose = () -> { };

    /** UDP address to listen on (default 0.0.0.0:9000); unused with a {@link #transportOpener}. */
    public SwitchContext bind(final InetSocketAddress bind)
    {
        this.bind = bind;
        return this;
    }

    /** The jobs it serves from the start (the controller adds others through the control port). */
    public SwitchContext jobs(final List<SwitchJobConfig> jobs)
    {
        this.jobs = List.copyOf(jobs);
        return this;
    }

    /** Each job's worker sources by job id, indexed by worker id (null where not given): admission. */
    public SwitchContext sources(final Map<Integer, InetSocketAddress[]> sources)
    {
        this.sources = Map.copyOf(sources);
        return this;
    }

    /** Lab mode: jobs without sources take each worker's source from its JOIN, from whoever sends it. */
    public SwitchContext open(final boolean open)
    {
        this.open = open;
        return this;
    }

    /** HTTP address of the control port for the controller; null for none. */
    public SwitchContext control(final InetSocketAddress control)
    {
        this.control = control;
        return this;
    }

    /** The secret the controller presents on the control port ({@link ApiToken#NONE}: none). */
    public SwitchContext token(final ApiToken token)
    {
        this.token = token;
        return this;
    }

    /** Two-level aggregation: the parameter server the sums of {@link #localWorkers} go up to; null for one level. */
    public SwitchContext upstream(final InetSocketAddress upstream)
    {
        this.upstream = upstream;
        return this;
    }

    /** With {@link #upstream}: the worker ids this switch serves. */
    public SwitchContext localWorkers(final int[] localWorkers)
    {
        this.localWorkers = localWorkers == null ? null : localWorkers.clone();
        return this;
    }

    /**
     * With {@link #upstream}: whether the parameter server sends each round's result once to this switch, which
     * multicasts it to its local workers (the default), rather than to every worker itself
     * ({@link org.inagg.p4.softswitch.UpstreamAggregation#resultsDown()}).
     */
    public SwitchContext resultsDown(final boolean resultsDown)
    {
        this.resultsDown = resultsDown;
        return this;
    }

    /** Most peer addresses of its transport. */
    public SwitchContext maxPeers(final int maxPeers)
    {
        this.maxPeers = maxPeers;
        return this;
    }

    /** Idle strategy by name ({@link IdleStrategies#NAMES}). */
    public SwitchContext idle(final String idle)
    {
        this.idle = idle;
        return this;
    }

    /**
     * Shards (default 1): each a thread with its own socket on {@link #bind}'s port (SO_REUSEPORT) and its own
     * software switch, the kernel handing each job's datagrams to shard {@code jobId % shards}
     * ({@link ReusePortSteering}), so jobs aggregate on as many cores with no state shared. UDP
     * only (not a {@link #transportOpener}'s), not with --upstream; under a controller (--control) each shard installs
     * the jobs of its ids.
     */
    public SwitchContext shards(final int shards)
    {
        this.shards = shards;
        return this;
    }

    public int shards()
    {
        return shards;
    }

    /**
     * Lanes per packet the switch gives a job that names none (default {@value #LANES_DEFAULT}; {@code inagg switch}
     * sets what fills its interface's MTU): reported on the control port, where controllers size their jobs by it.
     */
    public SwitchContext defaultLanes(final int defaultLanes)
    {
        this.defaultLanes = defaultLanes;
        return this;
    }

    public int defaultLanes()
    {
        return defaultLanes;
    }

    /** Runs the switch on the transport this opens (DPDK) instead of a UDP port on {@link #bind}; null: UDP. */
    public SwitchContext transportOpener(final TransportOpener transportOpener)
    {
        this.transportOpener = transportOpener;
        return this;
    }

    /** What each shard of the switch sends and receives through, given its transport and its frames' headers. */
    public SwitchContext decorator(final Decorator decorator)
    {
        this.decorator = Objects.requireNonNull(decorator, "decorator");
        return this;
    }

    /** Room its counters need: {@link #COUNTERS_PER_SHARD} for each of its {@link #shards}. */
    public int countersCapacity()
    {
        return COUNTERS_PER_SHARD * shards;
    }

    /**
     * Where its counters go (with room for {@link #countersCapacity()}: every shard's and its transport's), given
     * where it listens ({@code udp://HOST:PORT} or the opened transport's name), and what closes them when the node
     * closes (a counters file).
     */
    public SwitchContext counters(final Function<String, CounterRegistry> counters, final Runnable close)
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
    public SwitchContext conclude()
    {
        Objects.requireNonNull(bind, "bind");
        if (jobs.isEmpty() && control == null)
        {
            throw new IllegalArgumentException("give jobs with --job ID:WORKERS, or --control HOST:PORT for the"
                + " controller to add them");
        }
        Admission.check(jobs, sources, open, upstream == null ? null : localWorkers);
        if ((upstream == null) != (localWorkers == null))
        {
            throw new IllegalArgumentException("--upstream and --local-workers go together");
        }
        if (upstream != null && transportOpener != null)
        {
            throw new IllegalArgumentException("--upstream runs over UDP; the DPDK transport has no parameter server"
                + " peer option yet");
        }
        if (maxPeers < 1)
        {
            throw new IllegalArgumentException("--max-peers must be at least 1, got " + maxPeers);
        }
        if (shards < 1 || shards > ReusePortSteering.MAX_SOCKETS)
        {
            throw new IllegalArgumentException("--shards must be in 1.."
                + ReusePortSteering.MAX_SOCKETS + ", got " + shards);
        }
        if (shards > 1)
        {
            final String without = transportOpener != null ? "the DPDK transport (one queue per port here)"
                : upstream != null ? "--upstream (a parameter server serves one job, so a switch under it has one "
                    + "job, which one shard serves anyway)"
                : null;
            if (without != null)
            {
                throw new IllegalArgumentException("--shards " + shards + " runs on UDP, not with " + without
                    + "; leave --shards at 1");
            }
        }
        if (defaultLanes < 1 || defaultLanes > InaggHeader.MAX_ELEMENTS_FOR_1500_MTU)
        {
            throw new IllegalArgumentException("the switch's default lanes must be in 1.."
                + InaggHeader.MAX_ELEMENTS_FOR_1500_MTU + ", got " + defaultLanes);
        }
        IdleStrategies.byName(idle);
        return this;
    }

    /** Largest lanes per packet it must take: its jobs', and a whole 1500-byte MTU's under a controller. */
    int maxLanes()
    {
        return Math.max(jobs.stream().mapToInt(SwitchJobConfig::lanesPerPacket).max().orElse(LANES_DEFAULT),
            control == null ? 0 : InaggHeader.MAX_ELEMENTS_FOR_1500_MTU);
    }

    /** Largest message: a PARTIAL of the widest job with {@link #upstream}, else a packet of {@link #maxLanes()}. */
    int maxMessageLength()
    {
        final int maxWorkers = jobs.stream().mapToInt(SwitchJobConfig::workers).max().orElse(1);
        return upstream == null ? InaggHeader.messageLength(maxLanes())
            : EsaWire.maxPartialLength(maxLanes(), maxWorkers);
    }

    /**
     * Under a controller, strangers' datagrams may take only half of the peer table: the rest stays free for the
     * sources the controller registers, whatever a flood from many source ports does.
     */
    int maxLearnedPeers()
    {
        return control == null ? maxPeers : Math.max(1, maxPeers / 2);
    }

    public InetSocketAddress bind()
    {
        return bind;
    }

    public List<SwitchJobConfig> jobs()
    {
        return jobs;
    }

    public Map<Integer, InetSocketAddress[]> sources()
    {
        return sources;
    }

    public boolean open()
    {
        return open;
    }

    public InetSocketAddress control()
    {
        return control;
    }

    public ApiToken token()
    {
        return token;
    }

    public InetSocketAddress upstream()
    {
        return upstream;
    }

    public int[] localWorkers()
    {
        return localWorkers == null ? null : localWorkers.clone();
    }

    public boolean resultsDown()
    {
        return resultsDown;
    }

    public int maxPeers()
    {
        return maxPeers;
    }

    public String idle()
    {
        return idle;
    }

    TransportOpener transportOpener()
    {
        return transportOpener;
    }

    Decorator decorator()
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
