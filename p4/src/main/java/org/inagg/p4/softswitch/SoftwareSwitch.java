package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.membership.JoinLog;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;
import org.inagg.wire.WireCheck;

/**
 * A switch in software: the same match-action pipeline as the P4 programs, run as an Agrona agent over any
 * {@link Transport}.
 * <p>
 * Per message: <b>parse</b> (header checks) → <b>job table</b> (exact match on job id) → <b>worker check</b> (id below
 * the job's worker count, source equal to the address the worker joined from) → <b>slot check</b> (slot in the
 * pool, lane count within the job's) → the {@link SlotPool} register actions (round, seen, count, lanes, exponent) →
 * <b>decision</b>: the W-th fresh contribution completes the slot and its sum is multicast to every worker (with the
 * worker id rewritten per copy, as egress does); any packet of a complete round gets the sum back to its worker alone
 * (a complete round never takes another contribution); anything else is absorbed or dropped and counted, never
 * aggregated.
 * <p>
 * Collectives and reduce ops (docs/wire-format.md, "Collectives and reduce ops") are read from each packet's Flags:
 * the lanes combine with the op (SUM, MIN, MAX); a REDUCE_SCATTER round's result goes with its lanes to the packet's
 * Owner and header-only to every other worker; an ALL_GATHER round stores the Owner's lanes, counts the others'
 * header-only contributions, and sends the Owner's lanes to every worker. A reserved collective, op or flag is
 * dropped by the parser ({@link SwitchCounter#DROP_UNSUPPORTED}); so is anything but ALL_REDUCE SUM of a two-level job,
 * whose parameter server only sums; an Owner that is not a worker id of the job is dropped at the worker check.
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
    private static final int NO_PEER = -1;
    /** The result's lanes go to every worker (ALL_REDUCE, ALL_GATHER), not to one Owner (REDUCE_SCATTER). */
    private static final int ALL_WORKERS = -1;
    private static final int MAX_RECEIVE_BURSTS_PER_CYCLE = 64;

    private final Transport transport;
    private final int receiveBurst;
    private final SwitchJob[] jobs = new SwitchJob[InaggHeader.MAX_JOB_ID + 1];
    private final ManyToOneConcurrentArrayQueue<JobRequest> pendingJobs = new ManyToOneConcurrentArrayQueue<>(1024);
    private final AtomicCounter[] counters = new AtomicCounter[SwitchCounter.values().length];
    private final AtomicCounter jobsGauge;
    private final AtomicCounter sessionsStarted;
    private final AtomicCounter slotsGauge;
    private int installedJobs;
    private long installedSlots;
    private final MemorySegment staging;
    /** Jobs as last requested through {@link #addJob}, to refuse overlapping slot ranges; guarded by itself. */
    private final Map<Integer, SwitchJobConfig> requestedJobs = new HashMap<>();
    private final JoinLog joinLog;

    /** A job to install, or (config null) job {@code removeJobId} to remove. */
    private record JobRequest(SwitchJobConfig config, UpstreamAggregation upstream, int removeJobId)
    {
    }

    /** One row of the job table with the job's slot pool. */
    private static final class SwitchJob
    {
        final SwitchJobConfig config;
        /** Replaced by a fresh pool when a new session starts. */
        SlotPool pool;
        final JobMembership membership;
        /** Workers this switch serves: all of the job's, or the local ones under two-level aggregation. */
        final boolean[] local;
        /** Fresh contributions that complete a round: the number of local workers. */
        final int contributors;
        /** Where complete sums go under two-level aggregation, else {@link #NO_PEER} (multicast to the workers). */
        final int upstreamPeer;
        /** The local workers as the 32-bit bitmap words of a PARTIAL. */
        final int[] upstreamBitmap;

        SwitchJob(final SwitchJobConfig config, final UpstreamAggregation upstream)
        {
            this.config = config;
            this.membership = new JobMembership(config.jobId(), config.workers(), config.workerPeers(),
                config.joinCredentials(), config.session(), true);
            this.local = new boolean[config.workers()];
            this.upstreamBitmap = new int[EsaWire.bitmapWords(config.workers())];
            if (upstream == null)
            {
                Arrays.fill(local, true);
                contributors = config.workers();
                upstreamPeer = NO_PEER;
            }
            else
            {
                for (final int worker : upstream.localWorkers())
                {
                    local[worker] = true;
                    upstreamBitmap[worker >>> 5] |= 1 << (worker & 31);
                }
                contributors = upstream.localWorkers().length;
                upstreamPeer = upstream.parameterServerPeer();
            }
            this.pool = newPool();
        }

        SlotPool newPool()
        {
            return new SlotPool(config.slots(), config.workers(), contributors, config.lanesPerPacket());
        }
    }

    public SoftwareSwitch(final Transport transport, final CounterRegistry registry, final int receiveBurst)
    {
        this.transport = transport;
        this.receiveBurst = receiveBurst;
        this.staging = Arena.ofAuto().allocate(transport.maxMessageLength(), 64);
        for (final SwitchCounter counter : SwitchCounter.values())
        {
            counters[counter.ordinal()] = registry.newCounter(counter, "switch: " + counter.label());
        }
        this.jobsGauge = registry.newCounter(SwitchGauge.JOBS, "switch: " + SwitchGauge.JOBS.label());
        this.sessionsStarted = registry.newCounter(SwitchGauge.SESSIONS_STARTED,
            "switch: " + SwitchGauge.SESSIONS_STARTED.label());
        this.slotsGauge = registry.newCounter(SwitchGauge.SLOTS, "switch: " + SwitchGauge.SLOTS.label());
        this.joinLog = new JoinLog(SoftwareSwitch.class, "switch", transport);
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
            if (EsaWire.partialLength(config.lanesPerPacket(), config.workers()) > transport.maxMessageLength())
            {
                throw new IllegalArgumentException("job " + config.jobId() + ": partials of "
                    + EsaWire.partialLength(config.lanesPerPacket(), config.workers())
                    + " bytes exceed the switch transport's " + transport.maxMessageLength());
            }
        }
        if (InaggHeader.messageLength(config.lanesPerPacket()) > transport.maxMessageLength())
        {
            throw new IllegalArgumentException("job " + config.jobId() + ": " + config.lanesPerPacket()
                + " lanes per packet need " + InaggHeader.messageLength(config.lanesPerPacket())
                + "-byte messages but the switch transport carries at most " + transport.maxMessageLength());
        }
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
            if (!pendingJobs.offer(new JobRequest(config, upstream, -1)))
            {
                throw new IllegalStateException("too many job changes pending; is the switch agent running?");
            }
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
            if (!pendingJobs.offer(new JobRequest(null, null, jobId)))
            {
                throw new IllegalStateException("too many job changes pending; is the switch agent running?");
            }
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
        final SwitchJob job = jobs[jobId];
        return job == null ? -1 : job.membership.session();
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
        return counters[counter.ordinal()].get();
    }

    @Override
    public String roleName()
    {
        return "inagg-switch";
    }

    @Override
    public int doWork()
    {
        int work = 0;
        JobRequest request;
        while ((request = pendingJobs.poll()) != null)
        {
            final SwitchJobConfig config = request.config();
            if (config == null)
            {
                if (jobs[request.removeJobId()] != null)
                {
                    jobsGauge.setRelease(--installedJobs);
                    installedSlots -= jobs[request.removeJobId()].config.slots();
                    slotsGauge.setRelease(installedSlots);
                }
                jobs[request.removeJobId()] = null;
                joinLog.jobRemoved(request.removeJobId());
                work++;
                continue;
            }
            final SwitchJob previous = jobs[config.jobId()];
            if (previous == null)
            {
                jobsGauge.setRelease(++installedJobs);
            }
            else
            {
                installedSlots -= previous.config.slots();
                if (previous.membership.session() != config.session())
                {
                    sessionsStarted.incrementRelease();
                }
            }
            installedSlots += config.slots();
            slotsGauge.setRelease(installedSlots);
            jobs[config.jobId()] = new SwitchJob(config, request.upstream());
            joinLog.jobInstalled(config.jobId(), config.workers() + " workers, " + config.slots() + " slots of "
                + config.lanesPerPacket() + " lanes, session " + config.session()
                + (config.registeredSources() ? ", registered sources" : ", open (sources learned from JOINs)")
                + (config.credentialsRequired() ? ", JOIN credentials required" : "")
                + (request.upstream() == null ? ""
                : ", summing workers " + Arrays.toString(request.upstream().localWorkers()) + " up to peer "
                + transport.describePeer(request.upstream().parameterServerPeer())));
            work++;
        }
        // Drain the receive queue (bounded): a switch that reads less than its workers send overflows socket buffers.
        int received;
        int bursts = 0;
        do
        {
            received = transport.poll(this, receiveBurst);
            work += received + transport.flush();
        }
        while (received == receiveBurst && ++bursts < MAX_RECEIVE_BURSTS_PER_CYCLE);
        return work;
    }

    @Override
    public void onClose()
    {
        transport.close();
    }

    @Override
    public void onMessage(final MemorySegment m, final long o, final int length, final int peer)
    {
        increment(SwitchCounter.RECEIVED);
        // Parser
        if (InaggHeader.check(m, o, length) != WireCheck.OK || peer == NO_PEER)
        {
            increment(SwitchCounter.DROP_MALFORMED);
            return;
        }
        final int type = InaggHeader.type(m, o);
        if (type == MessageType.AGGREGATE && (InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) == 0)
        {
            if ((InaggHeader.flags(m, o) & InaggHeader.FLAG_RESERVED) != 0)
            {
                increment(SwitchCounter.DROP_MALFORMED);
                return;
            }
            if (InaggHeader.hasReservedCollectiveBits(m, o))
            {
                increment(SwitchCounter.DROP_UNSUPPORTED);
                return;
            }
            aggregate(m, o, length, peer);
        }
        else if (type == MessageType.JOIN)
        {
            join(m, o, peer);
        }
        else
        {
            increment(SwitchCounter.DROP_MALFORMED);
        }
    }

    private void aggregate(final MemorySegment m, final long o, final int length, final int peer)
    {
        // Job table
        final SwitchJob job = jobs[InaggHeader.jobId(m, o)];
        if (job == null)
        {
            increment(SwitchCounter.DROP_UNKNOWN_JOB);
            return;
        }
        if (job.upstreamPeer != NO_PEER && !InaggHeader.isAllReduceSum(m, o))
        {
            // The parameter server sums; a two-level job carries ALL_REDUCE SUM only.
            increment(SwitchCounter.DROP_UNSUPPORTED);
            return;
        }
        // Worker check: the sender, and the Owner of a REDUCE_SCATTER or ALL_GATHER
        final int worker = InaggHeader.workerId(m, o);
        final int collective = InaggHeader.collective(m, o);
        final int owner = collective == InaggHeader.COLLECTIVE_ALL_REDUCE ? worker : InaggHeader.owner(m, o);
        if (worker >= job.config.workers() || !job.local[worker] || owner >= job.config.workers())
        {
            increment(SwitchCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        if (!job.membership.isSource(worker, peer))
        {
            increment(SwitchCounter.DROP_SOURCE_MISMATCH);
            return;
        }
        // Session check: a packet of an earlier (or later) run of the job never touches its slots; its sender learns
        // that the job moved on, with the worker whose rejoin started the current session.
        if (!job.membership.isCurrent(InaggHeader.session(m, o)))
        {
            increment(SwitchCounter.DROP_STALE_SESSION);
            replyStaleSession(job, m, o, worker, peer);
            return;
        }
        // Slot check
        final int slot = InaggHeader.slotIndex(m, o);
        final int laneCount = InaggHeader.elementCount(m, o);
        if (slot >= job.config.slots())
        {
            increment(SwitchCounter.DROP_BAD_SLOT);
            return;
        }
        final boolean gather = collective == InaggHeader.COLLECTIVE_ALL_GATHER;
        // An ALL_GATHER round's lanes come from its Owner alone, and only from it.
        if (laneCount > job.config.lanesPerPacket() || (gather && (laneCount > 0) != (worker == owner)))
        {
            increment(SwitchCounter.DROP_BAD_SIZE);
            return;
        }
        final SlotPool pool = job.pool;
        final int copyIndex = 2 * slot + InaggHeader.shadowCopy(m, o);
        // Register actions
        final int round = pool.roundAction(copyIndex, InaggHeader.sequence(m, o),
            gather ? SlotPool.NO_LANE_COUNT : laneCount);
        switch (round)
        {
            case SlotPool.ROUND_STALE -> increment(SwitchCounter.DROP_STALE);
            case SlotPool.ROUND_VIOLATION -> increment(SwitchCounter.DROP_VIOLATION);
            case SlotPool.ROUND_BAD_SIZE -> increment(SwitchCounter.DROP_BAD_SIZE);
            case SlotPool.ROUND_COMPLETE ->
            {
                if (job.upstreamPeer != NO_PEER)
                {
                    // The switch holds only its workers' sum, not the result: the server answers (or adds it).
                    forwardUpstream(job, m, o, length);
                }
                else if (sendResult(job, copyIndex, m, o, worker, owner))
                {
                    increment(SwitchCounter.RETRANSMIT_REPLIES);
                }
            }
            default ->
            {
                if (pool.seenAction(copyIndex, worker))
                {
                    increment(SwitchCounter.DUPLICATES);
                    return;
                }
                final int count = pool.countAction(copyIndex);
                final boolean first = count == 1;
                if (!gather)
                {
                    pool.lanesAction(copyIndex, first, InaggHeader.reduceOp(m, o), m, o + InaggHeader.PAYLOAD_OFFSET,
                        laneCount);
                }
                else if (worker == owner)
                {
                    pool.gatherAction(copyIndex, m, o + InaggHeader.PAYLOAD_OFFSET, laneCount);
                }
                pool.exponentAction(copyIndex, first, InaggHeader.nextExponent(m, o));
                increment(SwitchCounter.CONTRIBUTIONS);
                if (count == job.contributors)
                {
                    if (job.upstreamPeer == NO_PEER)
                    {
                        multicastResult(job, copyIndex, m, o, collective == InaggHeader.COLLECTIVE_REDUCE_SCATTER
                            ? owner : ALL_WORKERS);
                    }
                    else
                    {
                        sendPartialUpstream(job, copyIndex, m, o);
                    }
                }
            }
        }
    }

    /**
     * Sends the completed sum to every worker: built once in the switch's own staging memory, then copied per
     * destination with its worker id (as egress replication does). Never copy from an already committed message: its
     * receiver may consume it, and a ring reclaim and zero it, while the later copies are still being made. With a
     * {@code lanesTo} owner (REDUCE_SCATTER) only that worker's copy carries the lanes; the others are header-only.
     */
    private void multicastResult(
        final SwitchJob job, final int copyIndex, final MemorySegment m, final long o, final int lanesTo)
    {
        final int fullLength = InaggHeader.messageLength(job.pool.lanes(copyIndex));
        writeResult(job, copyIndex, m, o, 0, staging, 0, true);
        for (int worker = 0; worker < job.config.workers(); worker++)
        {
            final boolean withLanes = lanesTo == ALL_WORKERS || worker == lanesTo;
            final int length = withLanes ? fullLength : InaggHeader.LENGTH;
            final long offset = transport.claim(job.membership.peer(worker), length);
            if (offset == Transport.CLAIM_FAILED)
            {
                increment(SwitchCounter.TX_FULL);
                continue;
            }
            final MemorySegment tx = transport.txMemory();
            MemorySegment.copy(staging, 0, tx, offset, length);
            InaggHeader.setWorkerId(tx, offset, worker);
            if (!withLanes)
            {
                InaggHeader.setElementCount(tx, offset, 0);
            }
            transport.commit();
            increment(SwitchCounter.RESULTS_SENT);
        }
    }

    /**
     * Two-level aggregation: the sum of this switch's workers goes to the job's parameter server as a PARTIAL
     * (reason SUBTREE) with their bitmap. Lost like any packet if the transport is full: the workers retransmit, and
     * their retransmissions reach the server raw.
     */
    private void sendPartialUpstream(final SwitchJob job, final int copyIndex, final MemorySegment m, final long o)
    {
        final int lanes = job.pool.lanes(copyIndex);
        final int words = job.upstreamBitmap.length;
        final long offset = transport.claim(job.upstreamPeer, EsaWire.partialLength(lanes, job.config.workers()));
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(SwitchCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        InaggHeader.write(tx, offset, EsaWire.TYPE_PARTIAL, InaggHeader.flags(m, o) & InaggHeader.FLAG_INT32,
            job.config.jobId(), job.contributors, InaggHeader.slotIndex(m, o), InaggHeader.shadowCopy(m, o),
            InaggHeader.sequence(m, o), lanes + words, InaggHeader.blockExponent(m, o),
            job.pool.exponent(copyIndex), InaggHeader.priority(m, o));
        InaggHeader.setStatus(tx, offset, EsaWire.REASON_SUBTREE);
        EsaWire.setPartialBitmapWords(tx, offset, words);
        job.pool.readLanes(copyIndex, tx, offset + InaggHeader.PAYLOAD_OFFSET);
        for (int k = 0; k < words; k++)
        {
            EsaWire.setPartialBitmapWord(tx, offset, lanes, k, job.upstreamBitmap[k]);
        }
        transport.commit();
        increment(SwitchCounter.UPSTREAM_PARTIALS);
    }

    /** A packet of a round this switch completed, to the parameter server as it came (reason RETRANSMIT). */
    private void forwardUpstream(final SwitchJob job, final MemorySegment m, final long o, final int length)
    {
        final long offset = transport.claim(job.upstreamPeer, length);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(SwitchCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        MemorySegment.copy(m, o, tx, offset, length);
        InaggHeader.setStatus(tx, offset, EsaWire.REASON_RETRANSMIT);
        transport.commit();
        increment(SwitchCounter.UPSTREAM_FORWARDS);
    }

    /** A complete round's result to one worker: header-only for a REDUCE_SCATTER worker that is not the Owner. */
    private boolean sendResult(
        final SwitchJob job, final int copyIndex, final MemorySegment m, final long o, final int worker,
        final int owner)
    {
        final boolean withLanes = InaggHeader.collective(m, o) != InaggHeader.COLLECTIVE_REDUCE_SCATTER
            || worker == owner;
        final long offset = transport.claim(job.membership.peer(worker),
            withLanes ? InaggHeader.messageLength(job.pool.lanes(copyIndex)) : InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(SwitchCounter.TX_FULL);
            return false;
        }
        writeResult(job, copyIndex, m, o, worker, transport.txMemory(), offset, withLanes);
        transport.commit();
        return true;
    }

    /**
     * The result reuses the request's header (job, slot, copy, sequence, block exponent, collective, op, Owner) with
     * the round's lanes, or none ({@code withLanes} false: a REDUCE_SCATTER result to a worker that is not the Owner).
     */
    private static void writeResult(
        final SwitchJob job, final int copyIndex, final MemorySegment m, final long o, final int worker,
        final MemorySegment tx, final long offset, final boolean withLanes)
    {
        MemorySegment.copy(m, o, tx, offset, InaggHeader.LENGTH);
        InaggHeader.setFlags(tx, offset, (InaggHeader.flags(m, o)
            & (InaggHeader.FLAG_INT32 | InaggHeader.COLLECTIVE_MASK | InaggHeader.OP_MASK)) | InaggHeader.FLAG_RESULT);
        InaggHeader.setWorkerId(tx, offset, worker);
        InaggHeader.setElementCount(tx, offset, withLanes ? job.pool.lanes(copyIndex) : 0);
        InaggHeader.setNextExponent(tx, offset, job.pool.exponent(copyIndex));
        if (withLanes)
        {
            job.pool.readLanes(copyIndex, tx, offset + InaggHeader.PAYLOAD_OFFSET);
        }
    }

    private void replyStaleSession(
        final SwitchJob job, final MemorySegment m, final long o, final int worker, final int peer)
    {
        final long offset = transport.claim(peer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(SwitchCounter.TX_FULL);
            return;
        }
        InaggHeader.writeReject(transport.txMemory(), offset, InaggHeader.jobId(m, o), worker,
            RejectReason.STALE_SESSION, job.membership.session(), job.membership.sessionCause());
        transport.commit();
    }

    private void join(final MemorySegment m, final long o, final int peer)
    {
        final int jobId = InaggHeader.jobId(m, o);
        final int worker = InaggHeader.workerId(m, o);
        final int claimedWorkers = InaggHeader.sequence(m, o);
        final SwitchJob job = jobs[jobId];
        final int decision;
        final int reason;
        // Over DPDK a JOIN from a registered source's address through a MAC not pinned to it comes from the source's
        // unpinned peer; it speaks for the source only where the membership allows it (the first JOIN, or one that
        // must show the worker's credential), and pins its MAC once accepted.
        final int claimed = transport.claimedPeer(peer);
        final int source = claimed != NO_PEER && job != null
            && job.membership.mayPin(worker, claimed, transport.isPinned(claimed)) ? claimed : peer;
        if (job == null)
        {
            decision = JobMembership.REJECT;
            reason = RejectReason.UNKNOWN_JOB;
        }
        else
        {
            final boolean served = worker < job.config.workers() && job.local[worker];
            decision = job.membership.join(worker, claimedWorkers, InaggHeader.session(m, o),
                InaggHeader.joinIncarnation(m, o), InaggHeader.joinCredential(m, o), source, served);
            reason = job.membership.rejectReason();
        }
        final boolean pinFailed = decision == JobMembership.ACCEPT && source != peer && !transport.pin(peer);
        if (decision == JobMembership.SPOOFED)
        {
            // A JOIN from anyone but the registered source is not answered: no reply to a spoofed address.
            increment(SwitchCounter.DROP_SOURCE_MISMATCH);
            joinLog.spoofed(jobId, worker, peer);
            return;
        }
        if (decision == JobMembership.BAD_CREDENTIAL)
        {
            // Not the worker's secret: unanswered, and the job (session, slots, the worker's incarnation) unchanged.
            increment(SwitchCounter.DROP_BAD_CREDENTIAL);
            joinLog.badCredential(jobId, worker, peer);
            return;
        }
        if (decision == JobMembership.ACCEPT && job.membership.sessionStarted())
        {
            job.pool = job.newPool();
            sessionsStarted.incrementRelease();
            joinLog.sessionStarted(jobId, job.membership.session(), worker, source);
        }
        if (pinFailed)
        {
            // Accepted, but no longer the message being handed up (a fault injector held it back): answered as if
            // lost, so that the worker's next JOIN pins its MAC before its AGGREGATEs come.
            return;
        }
        // A REJECT goes back to whoever sent the JOIN (over DPDK, an unpinned peer's MAC); an ACK to the source it
        // pinned.
        final int replyPeer = decision == JobMembership.ACCEPT ? source : peer;
        final long offset = transport.claim(replyPeer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(SwitchCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        if (decision == JobMembership.ACCEPT)
        {
            InaggHeader.writeJoinAck(tx, offset, jobId, worker,
                job.config.slots(), job.config.workers(), job.config.lanesPerPacket(), job.membership.session());
            increment(SwitchCounter.JOINS);
        }
        else
        {
            InaggHeader.writeReject(tx, offset, jobId, worker, reason, job == null ? 0 : job.membership.session(),
                reason == RejectReason.STALE_SESSION ? job.membership.sessionCause() : 0);
            increment(SwitchCounter.REJECTS);
        }
        transport.commit();
        if (decision == JobMembership.ACCEPT)
        {
            joinLog.joined(jobId, worker, job.config.workers(), replyPeer);
        }
        else
        {
            joinLog.rejected(jobId, worker, claimedWorkers, reason, replyPeer);
        }
    }

    private void increment(final SwitchCounter counter)
    {
        counters[counter.ordinal()].incrementRelease();
    }
}
