package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.function.LongSupplier;

import org.inagg.wire.InaggHeader;

/**
 * Settings of a controller, Aeron style: fluent setters, then {@link #conclude()} fills the defaults and validates
 * once. Options with a default read a system property ({@code *_PROP_NAME}) first.
 */
public final class ControllerContext
{
    public static final String BIND_PROP_NAME = "inagg.controller.bind";
    public static final String BIND_DEFAULT = "127.0.0.1:7070";
    public static final String JOURNAL_PROP_NAME = "inagg.controller.journal";
    public static final String JOURNAL_DEFAULT = "inagg-controller.journal";
    public static final String LEASE_PROP_NAME = "inagg.controller.lease.ms";
    public static final long LEASE_DEFAULT_MS = 6_000;
    public static final String POOL_SLOTS_PROP_NAME = "inagg.controller.pool.slots";
    public static final int POOL_SLOTS_DEFAULT = 1024;
    public static final int LANES_DEFAULT = 256;
    public static final String PLAN_TIMEOUT_PROP_NAME = "inagg.controller.plan.timeout.ms";
    public static final long PLAN_TIMEOUT_DEFAULT_MS = 10_000;
    public static final long PLAN_TIMEOUT_MAX_MS = 600_000;
    public static final int DEFAULT_SLOTS_DEFAULT = 128;

    private InetSocketAddress bind;
    private Path journal;
    private long leaseMs = -1;
    private long sweepMs = -1;
    private long planTimeoutMs = -1;
    private int poolSlots = -1;
    private int esaPoolBase;
    private int esaPoolSlots;
    private int lanes = -1;
    private String lanesWhy = "as set";
    private int defaultSlots = -1;
    private SwitchBackend switchBackend;
    private LongSupplier clockMs;
    private org.inagg.services.http.ApiToken token = org.inagg.services.http.ApiToken.NONE;
    private org.inagg.services.http.ApiToken operatorToken = org.inagg.services.http.ApiToken.NONE;
    private boolean insecure;
    private boolean trustSources;
    private boolean concluded;

    /**
     * Where the HTTP endpoint listens ({@value #BIND_DEFAULT}: this host only; port 0: a free one). An address other
     * hosts reach needs a {@link #token} or {@link #insecure}.
     */
    public ControllerContext bind(final InetSocketAddress bind)
    {
        this.bind = bind;
        return this;
    }

    /** The journal file ({@value #JOURNAL_DEFAULT} in the working directory by default). */
    public ControllerContext journal(final Path journal)
    {
        this.journal = journal;
        return this;
    }

    /** How long a rank stays registered without renewing ({@value #LEASE_DEFAULT_MS} ms); ranks renew every third. */
    public ControllerContext leaseMs(final long leaseMs)
    {
        this.leaseMs = leaseMs;
        return this;
    }

    /** How often leases are checked (default a tenth of the lease, at least 20 ms). */
    public ControllerContext sweepMs(final long sweepMs)
    {
        this.sweepMs = sweepMs;
        return this;
    }

    /**
     * How long {@code POST /v1/plans} may plan ({@value #PLAN_TIMEOUT_DEFAULT_MS} ms, at most
     * {@value #PLAN_TIMEOUT_MAX_MS}); a plan that takes longer is stopped and answered 503.
     */
    public ControllerContext planTimeoutMs(final long planTimeoutMs)
    {
        this.planTimeoutMs = planTimeoutMs;
        return this;
    }

    /** Slots in the switch's shared register pool ({@value #POOL_SLOTS_DEFAULT}). */
    public ControllerContext poolSlots(final int poolSlots)
    {
        this.poolSlots = poolSlots;
        return this;
    }

    /** The ESA aggregator pool inside the shared pool, reserved: no job's range overlaps it. */
    public ControllerContext esaPool(final int base, final int slots)
    {
        this.esaPoolBase = base;
        this.esaPoolSlots = slots;
        return this;
    }

    /**
     * Lanes per packet of the jobs; by default the switch's ({@link SwitchBackend#defaultLanes}: {@value
     * #LANES_DEFAULT} on bmv2, packets that fill a software switch's MTU, up to 363).
     */
    public ControllerContext lanes(final int lanes)
    {
        this.lanes = lanes;
        this.lanesWhy = "as set";
        return this;
    }

    /** Slots of a job that does not ask ({@value #DEFAULT_SLOTS_DEFAULT}, fewer for a small tensor). */
    public ControllerContext defaultSlots(final int defaultSlots)
    {
        this.defaultSlots = defaultSlots;
        return this;
    }

    /** The switch the controller programs (required). */
    public ControllerContext switchBackend(final SwitchBackend switchBackend)
    {
        this.switchBackend = switchBackend;
        return this;
    }

    /** A monotonic clock in ms (tests); {@code System.nanoTime()} by default. */
    public ControllerContext clockMs(final LongSupplier clockMs)
    {
        this.clockMs = clockMs;
        return this;
    }

    /**
     * Accepts a bind address other hosts reach without a {@link #token}: anyone who reaches it can then admit jobs
     * (never touch another job's: that needs its secret). For a lab network where every host is trusted.
     */
    public ControllerContext insecure(final boolean insecure)
    {
        this.insecure = insecure;
        return this;
    }

    /**
     * The operator's token: a request carrying it ({@code Authorization: Bearer TOKEN}) may list, inspect and free every
     * job and register into any, without the job's secret (default none: nobody may).
     */
    public ControllerContext operatorToken(final org.inagg.services.http.ApiToken operatorToken)
    {
        this.operatorToken = java.util.Objects.requireNonNull(operatorToken, "operatorToken");
        return this;
    }

    /**
     * Takes a rank's stated UDP source as it is, without comparing its IP with the HTTP request's (default false: a
     * mismatch is refused). For ranks whose HTTP requests reach the controller from another address than their packets
     * reach the switch from: a separate management network, NAT, a proxy.
     */
    public ControllerContext trustSources(final boolean trustSources)
    {
        this.trustSources = trustSources;
        return this;
    }

    /**
     * Fills the defaults and checks everything once.
     *
     * @throws IllegalArgumentException naming the setting that is wrong.
     */
    public ControllerContext conclude()
    {
        if (concluded)
        {
            return this;
        }
        if (switchBackend == null)
        {
            throw new IllegalArgumentException("controller: a switch is required (switchBackend)");
        }
        if (bind == null)
        {
            final String text = System.getProperty(BIND_PROP_NAME, BIND_DEFAULT);
            final int colon = text.lastIndexOf(':');
            bind = new InetSocketAddress(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
        }
        if (!bind.getAddress().isLoopbackAddress() && !token.required() && !operatorToken.required() && !insecure)
        {
            throw new IllegalArgumentException("controller: refusing to listen on " + bind.getAddress().getHostAddress()
                + ":" + bind.getPort() + " without a token: every host that reaches it could admit jobs. Give a token"
                + " (--token-file FILE or INAGG_TOKEN), listen on 127.0.0.1, or pass --insecure for a trusted network");
        }
        if (journal == null)
        {
            journal = Path.of(System.getProperty(JOURNAL_PROP_NAME, JOURNAL_DEFAULT));
        }
        if (leaseMs < 0)
        {
            leaseMs = Long.getLong(LEASE_PROP_NAME, LEASE_DEFAULT_MS);
        }
        if (leaseMs < 100)
        {
            throw new IllegalArgumentException("controller: lease must be at least 100 ms, got " + leaseMs);
        }
        if (sweepMs < 0)
        {
            sweepMs = Math.max(20, leaseMs / 10);
        }
        if (planTimeoutMs < 0)
        {
            planTimeoutMs = Long.getLong(PLAN_TIMEOUT_PROP_NAME, PLAN_TIMEOUT_DEFAULT_MS);
        }
        if (planTimeoutMs < 1 || planTimeoutMs > PLAN_TIMEOUT_MAX_MS)
        {
            throw new IllegalArgumentException("controller: plan timeout must be in 1.." + PLAN_TIMEOUT_MAX_MS
                + " ms, got " + planTimeoutMs);
        }
        if (poolSlots < 0)
        {
            poolSlots = Integer.getInteger(POOL_SLOTS_PROP_NAME, POOL_SLOTS_DEFAULT);
        }
        if (poolSlots < 1)
        {
            throw new IllegalArgumentException("controller: pool slots must be at least 1, got " + poolSlots);
        }
        if (esaPoolSlots < 0 || esaPoolBase < 0 || esaPoolSlots > 0 && (long)esaPoolBase + esaPoolSlots > poolSlots)
        {
            throw new IllegalArgumentException("controller: ESA pool " + esaPoolBase + "+" + esaPoolSlots
                + " must lie inside the pool of " + poolSlots + " slots");
        }
        if (lanes < 0)
        {
            // The switch's own: 256 for the P4 programs, what fills its MTU for a software switch.
            final SwitchBackend.Lanes fromSwitch = switchBackend.defaultLanes();
            lanes = fromSwitch.lanes();
            lanesWhy = fromSwitch.why();
        }
        if (lanes < 1 || lanes > InaggHeader.MAX_ELEMENTS_FOR_1500_MTU)
        {
            throw new IllegalArgumentException("controller: lanes must be in 1.."
                + InaggHeader.MAX_ELEMENTS_FOR_1500_MTU + ", got " + lanes);
        }
        if (defaultSlots < 0)
        {
            defaultSlots = DEFAULT_SLOTS_DEFAULT;
        }
        if (defaultSlots < 1 || defaultSlots >= InaggHeader.MAX_SLOTS)
        {
            throw new IllegalArgumentException("controller: default slots must be in 1.." + (InaggHeader.MAX_SLOTS - 1)
                + ", got " + defaultSlots);
        }
        if (clockMs == null)
        {
            clockMs = () -> System.nanoTime() / 1_000_000;
        }
        concluded = true;
        return this;
    }

    public InetSocketAddress bind()
    {
        return bind;
    }

    /**
     * The cluster's token: every request must carry it, or the {@link #operatorToken}; it admits jobs, and each job's
     * secret guards the job (default: none, anyone who reaches the port may admit jobs).
     */
    public ControllerContext token(final org.inagg.services.http.ApiToken token)
    {
        this.token = java.util.Objects.requireNonNull(token, "token");
        return this;
    }

    public org.inagg.services.http.ApiToken token()
    {
        return token;
    }

    public org.inagg.services.http.ApiToken operatorToken()
    {
        return operatorToken;
    }

    public boolean insecure()
    {
        return insecure;
    }

    public boolean trustSources()
    {
        return trustSources;
    }

    public Path journal()
    {
        return journal;
    }

    public long leaseMs()
    {
        return leaseMs;
    }

    public long sweepMs()
    {
        return sweepMs;
    }

    public long planTimeoutMs()
    {
        return planTimeoutMs;
    }

    public int poolSlots()
    {
        return poolSlots;
    }

    public int esaPoolBase()
    {
        return esaPoolBase;
    }

    public int esaPoolSlots()
    {
        return esaPoolSlots;
    }

    public int lanes()
    {
        return lanes;
    }

    /** Where {@link #lanes} comes from: "as set", or the switch's reason ({@link SwitchBackend#defaultLanes}). */
    public String lanesWhy()
    {
        return lanesWhy;
    }

    public int defaultSlots()
    {
        return defaultSlots;
    }

    public SwitchBackend switchBackend()
    {
        return switchBackend;
    }

    public LongSupplier clockMs()
    {
        return clockMs;
    }
}
