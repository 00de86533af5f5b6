package org.inagg.p4.softswitch;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.pipeline.AggregationNode;
import org.inagg.p4.pipeline.NodeCounters;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;

/**
 * A switch in software: the same match-action pipeline as the P4 programs, run as an Agrona agent over any
 * {@link Transport}.
 * <p>
 * The switch is an {@link AggregationNode} (drain, parse, job table, JOINs) with the slot strategy
 * ({@link SlotAggregation}). Per message: <b>parse</b> (header checks) → <b>job table</b> (exact match on job id) →
 * <b>worker check</b> (id below the job's worker count, source equal to the address the worker joined from, session)
 * → <b>slot check</b> (slot in the pool, lane count within the job's) → the {@link SlotPool} register actions (round,
 * seen, count, lanes, exponent) → <b>decision</b>: the W-th fresh contribution completes the slot and its sum is multicast to every worker (with the
 * worker id rewritten per copy, as egress does); any packet of a complete round gets the sum back to its worker alone
 * (a complete round never takes another contribution); anything else is absorbed or dropped and counted, never
 * aggregated.
 * <p>
 * Collectives and reduce ops (docs/wire-format.md, "Collectives and reduce ops") are read from each packet's Flags:
 * the lanes combine with the op (SUM, MIN, MAX); a REDUCE_SCATTER round's result goes with its lanes to the packet's
 * Owner and header-only to every other worker; an ALL_GATHER round stores the Owner's lanes, counts the others'
 * header-only contributions, and sends the Owner's lanes to every worker. A reserved collective, op or flag is
 * dropped by the parser ({@link SwitchCounter#DROP_UNSUPPORTED}); an Owner that is not a worker id of the job is
 * dropped at the worker check. A two-level job carries every collective and op: its PARTIALs name them
 * ({@link UpstreamForwarding}), and the parameter server finishes the round as this switch would.
 * <p>
 * Jobs are installed through {@link #addJob}, from any thread; the agent applies them between messages. Each job owns
 * its slots: jobs placed in the shared register pool ({@link SwitchJobConfig#slotBase()}) must not overlap, as the P4
 * programs index one register pool with {@code slotBase + slot}. A job with registered worker sources
 * ({@link SwitchJobConfig#registeredSources()}) accepts a worker's JOIN and AGGREGATE only from that worker's peer, the
 * software counterpart of the P4 programs' check of IPv4 source and UDP source port. A job with JOIN credentials
 * ({@link SwitchJobConfig#joinCredentials()}) answers a worker's JOIN only when it shows that worker's credential;
 * any other is dropped unanswered and counted ({@link SwitchCounter#DROP_BAD_CREDENTIAL}), and never starts a session.
 * Over a transport that pins registered sources to a link-layer source (DPDK: {@link Transport#claimedPeer}), the
 * first JOIN accepted from a worker's registered address pins its MAC, and only then are that MAC's messages the
 * worker's ({@link JobMembership#mayPin}).
 */
public final class SoftwareSwitch implements Agent, MessageHandler
{
    private final Transport transport;
    private final NodeCounters<SwitchCounter> counters;
    private final AggregationNode<SlotJob> node;
    private final ResultMulticast multicast;
    private final AtomicCounter jobsGauge;
    private final AtomicCounter sessionsStarted;
    private final AtomicCounter slotsGauge;
    /** Jobs as last requested through {@link #addJob}, to refuse overlapping slot ranges; guarded by itself. */
    private final Map<Integer, SwitchJobConfig> requestedJobs = new HashMap<>();

    public SoftwareSwitch(final Transport transport, final CounterRegistry registry, final int receiveBurst)
    {
        this(transport, registry, receiveBurst, "switch");
    }

    /**
     * @param owner what its counters' labels and log lines start with, and its thread's name after {@code inagg-}
     *              ({@code switch}; a sharded switch's shards {@code switch shard N}, each under its own name).
     */
    public SoftwareSwitch(final Transport transport, final CounterRegistry registry, final int receiveBurst,
        final String owner)
    {
        this.transport = transport;
        this.counters = new NodeCounters<>(registry, SwitchCounter.class, owner);
        this.jobsGauge = registry.newCounter(SwitchGauge.JOBS, owner + ": " + SwitchGauge.JOBS.label());
        this.sessionsStarted = registry.newCounter(SwitchGauge.SESSIONS_STARTED,
            owner + ": " + SwitchGauge.SESSIONS_STARTED.label());
        this.slotsGauge = registry.newCounter(SwitchGauge.SLOTS, owner + ": " + SwitchGauge.SLOTS.label());
        // The thread's name and the log lines' owner: inagg-switch and "switch: ...", or each shard's own.
        this.node = new AggregationNode<>("inagg-" + owner.replace(' ', '-'), SoftwareSwitch.class, owner, transport,
            counters, receiveBurst);
        this.node.strategy(new SlotAggregation(node, counters, jobsGauge, slotsGauge, sessionsStarted));
        this.multicast = new ResultMulticast(node, counters);
    }

    /**
     * Installs (or replaces, resetting its slots) a job; applied by the agent before the next message.
     *
     * @throws IllegalArgumentException if the job's messages do not fit the transport, or its slot range in the shared
     *                                  pool overlaps another job's.
     */
    public void addJob(final SwitchJobConfig config)
    {
        addJob(config, null);
    }

    /**
     * Installs (or replaces, resetting its slots) a job whose complete sums go up to a parameter server rather than to
     * the workers (two-level aggregation, see {@link UpstreamAggregation}); with {@code upstream} null, as
     * {@link #addJob(SwitchJobConfig)}.
     *
     * @throws IllegalArgumentException as {@link #addJob(SwitchJobConfig)}, or if a local worker is not a worker id of
     *                                  the job, or the job's PARTIALs do not fit the transport.
     */
    public void addJob(final SwitchJobConfig config, final UpstreamAggregation upstream)
    {
        if (upstream != null)
        {
            upstream.requireWithin(config.jobId(), config.workers());
            if (EsaWire.maxPartialLength(config.lanesPerPacket(), config.workers()) > transport.maxMessageLength())
            {
                throw new IllegalArgumentException("job " + config.jobId() + ": partials of "
                    + EsaWire.maxPartialLength(config.lanesPerPacket(), config.workers())
                    + " bytes exceed the switch transport's " + transport.maxMessageLength());
            }
        }
        if (InaggHeader.messageLength(config.lanesPerPacket()) > transport.maxMessageLength())
        {
            throw new IllegalArgumentException("job " + config.jobId() + ": " + config.lanesPerPacket()
                + " lanes per packet need " + InaggHeader.messageLength(config.lanesPerPacket())
                + "-byte messages but the switch transport carries at most " + transport.maxMessageLength());
        }
        final String description = config.workers() + " workers, " + config.slots() + " slots of "
            + config.lanesPerPacket() + " lanes, session " + config.session()
            + (config.registeredSources() ? ", registered sources" : ", open (sources learned from JOINs)")
            + (config.credentialsRequired() ? ", JOIN credentials required" : "")
            + (upstream == null ? ""
            : ", summing workers " + Arrays.toString(upstream.localWorkers()) + " up to peer "
            + transport.describePeer(upstream.parameterServerPeer())
            + (upstream.resultsDown() ? ", relaying its results down" : ""));
        final SlotJob job = upstream == null ? new SlotJob(config, null, multicast, description)
            : new SlotJob(config, upstream.localWorkers(),
            new UpstreamForwarding(node, counters, upstream, config.workers()), description);
        synchronized (requestedJobs)
        {
            for (final SwitchJobConfig other : requestedJobs.values())
            {
                if (other.jobId() != config.jobId() && other.overlaps(config))
                {
                    throw new IllegalArgumentException("job " + config.jobId() + ": slots " + config.slotBase() + ".."
                        + (config.slotBase() + config.slots() - 1) + " overlap job " + other.jobId() + "'s slots "
                        + other.slotBase() + ".." + (other.slotBase() + other.slots() - 1));
                }
            }
            node.install(job);
            requestedJobs.put(config.jobId(), config);
        }
    }

    /**
     * Removes a job, applied by the agent before the next message: its slots are freed, its packets dropped as an
     * unknown job's and its JOINs refused from then on.
     *
     * @return whether the job was installed (or requested).
     */
    public boolean removeJob(final int jobId)
    {
        synchronized (requestedJobs)
        {
            if (requestedJobs.remove(jobId) == null)
            {
                return false;
            }
            node.remove(jobId);
            return true;
        }
    }

    /** The jobs installed or requested (their configurations as last requested), by job id. */
    public Map<Integer, SwitchJobConfig> jobs()
    {
        synchronized (requestedJobs)
        {
            return Map.copyOf(requestedJobs);
        }
    }

    /** The current session of an installed job (-1 if none): the control plane's, or the last a rejoin started. */
    public int session(final int jobId)
    {
        final SlotJob job = node.job(jobId);
        return job == null ? -1 : job.membership().session();
    }

    public long gauge(final SwitchGauge gauge)
    {
        return switch (gauge)
        {
            case JOBS -> jobsGauge.get();
            case SLOTS -> slotsGauge.get();
            case SESSIONS_STARTED -> sessionsStarted.get();
        };
    }

    public long counter(final SwitchCounter counter)
    {
        return counters.get(counter);
    }

    @Override
    public String roleName()
    {
        return node.roleName();
    }

    @Override
    public int doWork()
    {
        return node.doWork();
    }

    @Override
    public void onClose()
    {
        node.onClose();
    }

    @Override
    public void onMessage(final MemorySegment m, final long o, final int length, final int peer)
    {
        node.onMessage(m, o, length, peer);
    }
}
