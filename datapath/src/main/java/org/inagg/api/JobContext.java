package org.inagg.api;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.IdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.transport.IdleStrategies;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.protocol.WorkerSettings;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;

/**
 * Settings of one worker's membership in an all-reduce job, Aeron style: fluent setters, then {@link #conclude()}
 * fills defaults and validates once. Each option with a default also reads a system property ({@code *_PROP_NAME}).
 */
public final class JobContext
{
    public static final String RETRANSMIT_TIMEOUT_PROP_NAME = "inagg.retransmit.timeout.us";
    public static final long RETRANSMIT_TIMEOUT_DEFAULT_US = 2_000;
    public static final String PEER_TIMEOUT_PROP_NAME = "inagg.peer.timeout.ms";
    public static final long PEER_TIMEOUT_DEFAULT_MS = 10_000;
    public static final String IDLE_STRATEGY_PROP_NAME = "inagg.idle.strategy";
    public static final int RECEIVE_BURST_DEFAULT = 64;
    public static final int REQUEST_QUEUE_DEFAULT = 64;

    private int jobId = -1;
    private int workerId = -1;
    private int workers = -1;
    private Transport transport;
    private int switchPeer;
    private int priority;
    private long joinCredential = InaggHeader.NO_CREDENTIAL;
    private Duration retransmitTimeout;
    private Duration peerTimeout;
    private String idleStrategy;
    private int receiveBurst = RECEIVE_BURST_DEFAULT;
    private boolean congestionControl;
    private FixedPointConverter converter;
    private CounterRegistry counters;
    private boolean concluded;

    public JobContext jobId(final int jobId)
    {
        this.jobId = jobId;
        return this;
    }

    public JobContext workerId(final int workerId)
    {
        this.workerId = workerId;
        return this;
    }

    public JobContext workers(final int workers)
    {
        this.workers = workers;
        return this;
    }

    /** The transport this worker sends and receives on; the job takes ownership and closes it. */
    public JobContext transport(final Transport transport)
    {
        this.transport = transport;
        return this;
    }

    /** The transport's peer number of the switch (0 by default: the first peer of a UDP transport). */
    public JobContext switchPeer(final int switchPeer)
    {
        this.switchPeer = switchPeer;
        return this;
    }

    /** Priority carried in every packet, for switches that schedule shared memory by priority (0 = lowest). */
    public JobContext priority(final int priority)
    {
        this.priority = priority;
        return this;
    }

    /**
     * The secret this worker's JOINs show: what the controller's registration answer hands this rank
     * ({@code joinCredential}); a switch that holds one for the worker drops JOINs without it. Default: none.
     */
    public JobContext joinCredential(final long joinCredential)
    {
        this.joinCredential = joinCredential;
        return this;
    }

    public JobContext retransmitTimeout(final Duration retransmitTimeout)
    {
        this.retransmitTimeout = retransmitTimeout;
        return this;
    }

    /** How long without progress before an operation fails: the bound on noticing a vanished participant. */
    public JobContext peerTimeout(final Duration peerTimeout)
    {
        this.peerTimeout = peerTimeout;
        return this;
    }

    /** Idle strategy of the worker's own thread, by name: {@value IdleStrategies#NAMES}. */
    public JobContext idleStrategy(final String idleStrategy)
    {
        this.idleStrategy = idleStrategy;
        return this;
    }

    public JobContext receiveBurst(final int receiveBurst)
    {
        this.receiveBurst = receiveBurst;
        return this;
    }

    /**
     * Whether the worker halves its window of slots in flight on a loss by order (AIMD), for links shared with other
     * traffic; off by default, the window being the job's pool (docs/protocol.md says what it costs under random loss).
     */
    public JobContext congestionControl(final boolean congestionControl)
    {
        this.congestionControl = congestionControl;
        return this;
    }

    /** The fixed-point converter; {@link FixedPointConverter#best()} by default. */
    public JobContext converter(final FixedPointConverter converter)
    {
        this.converter = converter;
        return this;
    }

    /** Where the worker's counters live; a private registry by default. */
    public JobContext counters(final CounterRegistry counters)
    {
        this.counters = counters;
        return this;
    }

    /** Fills defaults and validates; call once before use. @return this. */
    public JobContext conclude()
    {
        if (concluded)
        {
            return this;
        }
        require(jobId >= 0 && jobId <= InaggHeader.MAX_JOB_ID, "jobId must be in 0.." + InaggHeader.MAX_JOB_ID
            + ", got " + jobId);
        require(workers >= 1 && workers <= FixedPoint.MAX_WORKERS, "workers must be in 1.." + FixedPoint.MAX_WORKERS
            + ", got " + workers);
        require(workerId >= 0 && workerId < workers, "workerId must be in 0.." + (workers - 1) + ", got " + workerId);
        require(transport != null, "no transport set");
        require(priority >= 0 && priority <= 255, "priority must be in 0..255, got " + priority);
        require(receiveBurst >= 1, "receiveBurst must be at least 1, got " + receiveBurst);
        if (retransmitTimeout == null)
        {
            retransmitTimeout = Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(
                Long.getLong(RETRANSMIT_TIMEOUT_PROP_NAME, RETRANSMIT_TIMEOUT_DEFAULT_US)));
        }
        if (peerTimeout == null)
        {
            peerTimeout = Duration.ofMillis(Long.getLong(PEER_TIMEOUT_PROP_NAME, PEER_TIMEOUT_DEFAULT_MS));
        }
        require(!retransmitTimeout.isNegative() && !retransmitTimeout.isZero(), "retransmitTimeout must be positive");
        require(peerTimeout.compareTo(retransmitTimeout) > 0, "peerTimeout (" + peerTimeout
            + ") must exceed retransmitTimeout (" + retransmitTimeout + ")");
        if (idleStrategy == null)
        {
            idleStrategy = System.getProperty(IDLE_STRATEGY_PROP_NAME, IdleStrategies.DEFAULT);
        }
        IdleStrategies.byName(idleStrategy);
        if (converter == null)
        {
            converter = FixedPointConverter.best();
        }
        if (counters == null)
        {
            counters = new CounterRegistry(64);
        }
        concluded = true;
        return this;
    }

    WorkerSettings settings()
    {
        final long retransmitNs = retransmitTimeout.toNanos();
        return new WorkerSettings(jobId, workerId, workers, switchPeer, priority, retransmitNs, peerTimeout.toNanos(),
            Math.max(retransmitNs, TimeUnit.MILLISECONDS.toNanos(20)), receiveBurst, joinCredential, congestionControl);
    }

    public int jobId()
    {
        return jobId;
    }

    public int workerId()
    {
        return workerId;
    }

    public int workers()
    {
        return workers;
    }

    public Transport transport()
    {
        return transport;
    }

    public Duration peerTimeout()
    {
        return peerTimeout;
    }

    IdleStrategy newIdleStrategy()
    {
        return IdleStrategies.byName(idleStrategy, transport);
    }

    FixedPointConverter converter()
    {
        return converter;
    }

    public CounterRegistry counters()
    {
        return counters;
    }

    private static void require(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new IllegalArgumentException("invalid job configuration: " + message);
        }
    }
}
