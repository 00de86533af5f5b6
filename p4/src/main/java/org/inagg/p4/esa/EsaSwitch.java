package org.inagg.p4.esa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.membership.JoinLog;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;
import org.inagg.wire.WireCheck;

/**
 * A software switch whose aggregators form one pool shared by every job (ESA, or ATP for comparison), run as an Agrona
 * agent over any {@link Transport}. Each job has a parameter server ({@link ParameterServer}) that finishes what the
 * switch does not.
 * <p>
 * An AGGREGATE of block (job, sequence) goes to aggregator {@code i = index(job, sequence)} ({@link AggregatorPool})
 * and, in this order:
 * <ol>
 *   <li>a <b>retransmission</b> never allocates: if i holds its block, the partial sum is flushed to the server; the
 *       packet itself goes to the server, which merges it or answers it from the completed sum it keeps;</li>
 *   <li>i holds the packet's block: a fresh contribution is added (a duplicate is dropped); the W-th completes it;</li>
 *   <li>i's tombstone names the block (it was evicted from, or diverted at, i): to the server, so a block never has
 *       two partials in flight from one aggregator;</li>
 *   <li>i is free: the packet takes it;</li>
 *   <li>i holds another block: the packet takes it if {@link #preempts} says so, the holder's partial sum and bitmap
 *       going to the holder's server (PREEMPTED); otherwise the packet goes to its server as it is (ATP's collision
 *       fallback) and i's tombstone remembers its block.</li>
 * </ol>
 * On completion, ESA multicasts the sum, sends a copy to the server (for retransmissions) and frees i at once; ATP
 * sends the sum to the server and keeps i until the server's result comes back through the switch, which then
 * multicasts it. Exactness does not depend on the switch: the server counts each worker of a block once
 * (docs/esa.md).
 */
public final class EsaSwitch implements Agent, MessageHandler
{
    private static final int MAX_RECEIVE_BURSTS_PER_CYCLE = 64;
    private static final int JOBS = InaggHeader.MAX_JOB_ID + 1;

    private final Transport transport;
    private final MemorySegment staging;
    private final EsaSwitchSettings settings;
    private final AggregatorPool pool;
    private final boolean preemptive;
    private final EsaJobConfig[] jobs = new EsaJobConfig[JOBS];
    private final int[][] workerPeers = new int[JOBS][];
    /** Who may JOIN each job (sessions: always 0 on the ESA switch; docs/sessions.md). */
    private final JobMembership[] memberships = new JobMembership[JOBS];
    private final long[] remainingBytes = new long[JOBS];
    private final int[] tablePriority = new int[JOBS];
    private final ManyToOneConcurrentArrayQueue<Object> controlQueue = new ManyToOneConcurrentArrayQueue<>(4096);
    private final AtomicCounter[] counters = new AtomicCounter[EsaCounter.values().length];
    private final JoinLog joinLog;

    private record RemoveJob(int jobId)
    {
    }

    private record RemainingUpdate(int jobId, long bytes)
    {
    }

    public EsaSwitch(final Transport transport, final CounterRegistry registry, final EsaSwitchSettings settings)
    {
        this.transport = transport;
        this.staging = Arena.ofAuto().allocate(transport.maxMessageLength(), 64);
        this.settings = settings;
        this.pool = new AggregatorPool(settings.aggregators(), settings.maxWorkers(), settings.lanesPerAggregator());
        this.preemptive = settings.mode() == AllocationMode.PREEMPTIVE;
        for (final EsaCounter counter : EsaCounter.values())
        {
            counters[counter.ordinal()] = registry.newCounter(counter, "esa switch: " + counter.label());
        }
        this.joinLog = new JoinLog(EsaSwitch.class, "esa switch", transport);
    }

    /**
     * The preemption rule. A packet of a newer block of the holder's own job always takes the aggregator: the older
     * block is complete and leaked (a late duplicate re-allocated it) or stuck, and its sum is exact at the server
     * either way. Otherwise only ESA preempts, and only for a strictly higher priority: equal priorities never preempt
     * each other, so two jobs cannot thrash an aggregator.
     */
    public static boolean preempts(
        final AllocationMode mode, final int jobId, final int sequence, final int priority,
        final int holderJob, final int holderSequence, final int holderPriority)
    {
        if (jobId == holderJob)
        {
            return sequence - holderSequence > 0;
        }
        return mode == AllocationMode.PREEMPTIVE && priority > holderPriority;
    }

    /**
     * Shortest-remaining-first priority: 255 for no work left, one step down per eighth of a doubling of the
     * remaining KiB ({@code 255 - floor(8 * log2(1 + KiB))}, the logarithm approximated linearly between powers of
     * two), at least 1. Monotone: less work left never gives a lower priority.
     */
    public static int srfPriority(final long remainingBytes)
    {
        final long x = 1 + Math.max(0, remainingBytes) / 1024;
        final int e = 63 - Long.numberOfLeadingZeros(x);
        final int mantissa = (int)(e >= 3 ? (x >>> (e - 3)) & 7 : (x << (3 - e)) & 7);
        return Math.max(1, 255 - (8 * e + mantissa));
    }

    /**
     * Installs (or replaces) a job; applied by the agent before the next message. Any thread.
     *
     * @throws IllegalArgumentException if the job does not fit the pool or the transport.
     */
    public void addJob(final EsaJobConfig config)
    {
        if (config.lanesPerPacket() > settings.lanesPerAggregator() || config.workers() > settings.maxWorkers())
        {
            throw new IllegalArgumentException("job " + config.jobId() + ": " + config.workers() + " workers of "
                + config.lanesPerPacket() + " lanes do not fit aggregators of " + settings.lanesPerAggregator()
                + " lanes and " + settings.maxWorkers() + " workers");
        }
        if (EsaWire.partialLength(config.lanesPerPacket(), config.workers()) > transport.maxMessageLength())
        {
            throw new IllegalArgumentException("job " + config.jobId() + ": partials of "
                + EsaWire.partialLength(config.lanesPerPacket(), config.workers())
                + " bytes do not fit the switch transport (" + transport.maxMessageLength() + ")");
        }
        offer(config);
    }

    /** Removes a job and frees its aggregators. Any thread. */
    public void removeJob(final int jobId)
    {
        offer(new RemoveJob(jobId));
    }

    /** Control plane: the job's remaining bytes, from which shortest-remaining-first priorities follow. Any thread. */
    public void setRemainingBytes(final int jobId, final long bytes)
    {
        offer(new RemainingUpdate(jobId, bytes));
    }

    private void offer(final Object change)
    {
        if (!controlQueue.offer(change))
        {
            throw new IllegalStateException("too many control changes pending; is the switch agent running?");
        }
    }

    public long counter(final EsaCounter counter)
    {
        return counters[counter.ordinal()].get();
    }

    /** The job's current table priority (static, or SRF); agent thread or quiescent. */
    public int tablePriority(final int jobId)
    {
        return tablePriority[jobId];
    }

    @Override
    public String roleName()
    {
        return "inagg-esa-switch";
    }

    @Override
    public int doWork()
    {
        int work = applyControl();
        int received;
        int bursts = 0;
        do
        {
            received = transport.poll(this, settings.receiveBurst());
            work += received + transport.flush();
        }
        while (received == settings.receiveBurst() && ++bursts < MAX_RECEIVE_BURSTS_PER_CYCLE);
        return work;
    }

    /** Applies queued job changes; the agent does this each cycle, a test or harness may call it directly. */
    public int applyControl()
    {
        int work = 0;
        Object change;
        while ((change = controlQueue.poll()) != null)
        {
            work++;
            if (change instanceof EsaJobConfig config)
            {
                if (jobs[config.jobId()] != null)
                {
                    pool.releaseJob(config.jobId());
                }
                jobs[config.jobId()] = config;
                workerPeers[config.jobId()] = config.workerPeers();
                memberships[config.jobId()] = new JobMembership(config.jobId(), config.workers(),
                    config.workerPeers(), config.joinCredentials(), 0, false);
                remainingBytes[config.jobId()] = config.totalBytes();
                tablePriority[config.jobId()] = settings.policy() == PriorityPolicy.SHORTEST_REMAINING_FIRST
                    ? srfPriority(config.totalBytes()) : config.priority();
                joinLog.jobInstalled(config.jobId(), config.toString());
            }
            else if (change instanceof RemoveJob remove)
            {
                jobs[remove.jobId()] = null;
                workerPeers[remove.jobId()] = null;
                memberships[remove.jobId()] = null;
                pool.releaseJob(remove.jobId());
                joinLog.jobRemoved(remove.jobId());
            }
            else if (change instanceof RemainingUpdate update && jobs[update.jobId()] != null)
            {
                remainingBytes[update.jobId()] = update.bytes();
                refreshPriority(update.jobId());
            }
        }
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
        increment(EsaCounter.RECEIVED);
        if (InaggHeader.check(m, o, length) != WireCheck.OK)
        {
            increment(EsaCounter.DROP_MALFORMED);
            return;
        }
        final int type = InaggHeader.type(m, o);
        if (type == MessageType.JOIN)
        {
            join(m, o, peer);
            return;
        }
        if (type != MessageType.AGGREGATE)
        {
            increment(EsaCounter.DROP_MALFORMED);
            return;
        }
        if (!InaggHeader.isAllReduceSum(m, o))
        {
            // ESA's aggregators and the server's sums carry ALL_REDUCE SUM only (docs/wire-format.md).
            increment(EsaCounter.DROP_UNSUPPORTED);
            return;
        }
        final EsaJobConfig job = jobs[InaggHeader.jobId(m, o)];
        if (job == null)
        {
            increment(EsaCounter.DROP_UNKNOWN_JOB);
            return;
        }
        if ((InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) != 0)
        {
            fromServer(job, m, o, length, peer);
        }
        else
        {
            aggregate(job, m, o, length, peer);
        }
    }

    private void aggregate(
        final EsaJobConfig job, final MemorySegment m, final long o, final int length, final int peer)
    {
        final int jobId = job.jobId();
        final int worker = InaggHeader.workerId(m, o);
        if (worker >= job.workers() || workerPeers[jobId][worker] != peer)
        {
            increment(EsaCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        final int laneCount = InaggHeader.elementCount(m, o);
        if (laneCount > job.lanesPerPacket())
        {
            increment(EsaCounter.DROP_BAD_SIZE);
            return;
        }
        final int sequence = InaggHeader.sequence(m, o);
        final int i = pool.index(jobId, sequence);
        if ((InaggHeader.flags(m, o) & InaggHeader.FLAG_RETRANSMIT) != 0)
        {
            if (pool.holds(i, jobId, sequence) && !pool.acked(i))
            {
                evict(i, EsaWire.REASON_FLUSHED, EsaCounter.FLUSHES);
            }
            forward(job, m, o, length, EsaWire.REASON_RETRANSMIT, EsaCounter.FALLBACK_RETRANSMIT);
            return;
        }
        if (pool.holds(i, jobId, sequence))
        {
            if (pool.acked(i))
            {
                increment(EsaCounter.DUPLICATES);
                return;
            }
            if (pool.lanes(i) != laneCount)
            {
                increment(EsaCounter.DROP_BAD_SIZE);
                return;
            }
            if (pool.seenAction(i, worker))
            {
                increment(EsaCounter.DUPLICATES);
                return;
            }
            increment(EsaCounter.CONTRIBUTIONS);
            if (pool.contribute(i, m, o) == job.workers())
            {
                complete(i, job, m, o);
            }
            return;
        }
        if (pool.isTombstoned(i, jobId, sequence))
        {
            forward(job, m, o, length, EsaWire.REASON_TOMBSTONE, EsaCounter.FALLBACK_TOMBSTONE);
            return;
        }
        final int priority = effectivePriority(job, m, o);
        if (!pool.isFree(i))
        {
            final int holder = pool.holderJob(i);
            if (!preempts(settings.mode(), jobId, sequence, priority, holder, pool.holderSequence(i),
                pool.holderPriority(i)))
            {
                forward(job, m, o, length, EsaWire.REASON_COLLISION, EsaCounter.FALLBACK_COLLISION);
                pool.tombstone(i, jobId, sequence);
                return;
            }
            if (pool.acked(i))
            {
                pool.release(i, false);     // ATP: the server already has this complete sum
            }
            else if (holder == jobId)
            {
                evict(i, EsaWire.REASON_STALE, EsaCounter.STALE_EVICTIONS);
            }
            else
            {
                evict(i, EsaWire.REASON_PREEMPTED, EsaCounter.PREEMPTIONS);
            }
        }
        pool.allocate(i, jobId, priority, worker, m, o);
        increment(EsaCounter.ALLOCATIONS);
        increment(EsaCounter.CONTRIBUTIONS);
        if (job.workers() == 1)
        {
            complete(i, job, m, o);
        }
    }

    /**
     * A JOIN is answered as the slot switch answers it (JOIN_ACK: Sequence = W, Slot Index = the job's window,
     * Reserved = lanes; or REJECT with the reason), except that sources are always registered: a JOIN from anyone but
     * the worker's registered peer, or without the worker's JOIN credential, is dropped unanswered.
     */
    private void join(final MemorySegment m, final long o, final int peer)
    {
        final int jobId = InaggHeader.jobId(m, o);
        final int worker = InaggHeader.workerId(m, o);
        final int claimedWorkers = InaggHeader.sequence(m, o);
        final EsaJobConfig job = jobs[jobId];
        final JobMembership membership = job == null ? null : memberships[jobId];
        final int decision = membership == null ? JobMembership.REJECT
            : membership.join(worker, claimedWorkers, InaggHeader.session(m, o), InaggHeader.joinIncarnation(m, o),
                InaggHeader.joinCredential(m, o), peer, true);
        final int reason = membership == null ? RejectReason.UNKNOWN_JOB : membership.rejectReason();
        if (decision == JobMembership.SPOOFED)
        {
            increment(EsaCounter.DROP_UNKNOWN_WORKER);
            joinLog.spoofed(jobId, worker, peer);
            return;
        }
        if (decision == JobMembership.BAD_CREDENTIAL)
        {
            increment(EsaCounter.DROP_BAD_CREDENTIAL);
            joinLog.badCredential(jobId, worker, peer);
            return;
        }
        final long offset = transport.claim(peer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(EsaCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        if (decision == JobMembership.ACCEPT)
        {
            InaggHeader.writeJoinAck(tx, offset, jobId, worker, job.window(), job.workers(), job.lanesPerPacket(),
                membership.session());
            increment(EsaCounter.JOINS);
        }
        else
        {
            InaggHeader.writeReject(tx, offset, jobId, worker, reason, membership == null ? 0 : membership.session(),
                reason == RejectReason.STALE_SESSION ? membership.sessionCause() : 0);
            increment(EsaCounter.REJECTS);
        }
        transport.commit();
        if (decision == JobMembership.ACCEPT)
        {
            joinLog.joined(jobId, worker, job.workers(), peer);
        }
        else
        {
            joinLog.rejected(jobId, worker, claimedWorkers, reason, peer);
        }
    }

    private int effectivePriority(final EsaJobConfig job, final MemorySegment m, final long o)
    {
        return settings.policy() == PriorityPolicy.HEADER ? InaggHeader.priority(m, o) : tablePriority[job.jobId()];
    }

    private void refreshPriority(final int jobId)
    {
        if (settings.policy() == PriorityPolicy.SHORTEST_REMAINING_FIRST)
        {
            tablePriority[jobId] = srfPriority(remainingBytes[jobId]);
        }
    }

    private void complete(final int i, final EsaJobConfig job, final MemorySegment m, final long o)
    {
        increment(EsaCounter.COMPLETIONS);
        if (preemptive)
        {
            multicastFromPool(i, job, m, o);
            sendPartial(i, EsaWire.REASON_COMPLETE);
            pool.release(i, false);
            blockDone(job.jobId(), pool.lanes(i));
        }
        else
        {
            sendPartial(i, EsaWire.REASON_COMPLETE);
            pool.markAcked(i);
        }
    }

    private void blockDone(final int jobId, final int lanes)
    {
        remainingBytes[jobId] = Math.max(0, remainingBytes[jobId] - (long)lanes * Integer.BYTES);
        refreshPriority(jobId);
    }

    /** A result from the job's server: frees the block's aggregator (ATP's acknowledgement) and multicasts it. */
    private void fromServer(final EsaJobConfig job, final MemorySegment m, final long o, final int length,
        final int peer)
    {
        if (peer != job.parameterServerPeer())
        {
            increment(EsaCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        final int sequence = InaggHeader.sequence(m, o);
        final int i = pool.index(job.jobId(), sequence);
        if (pool.holds(i, job.jobId(), sequence))
        {
            pool.release(i, false);
        }
        if (!preemptive)
        {
            blockDone(job.jobId(), InaggHeader.elementCount(m, o));
        }
        increment(EsaCounter.ACKS);
        final int[] peers = workerPeers[job.jobId()];
        for (int w = 0; w < job.workers(); w++)
        {
            final long offset = transport.claim(peers[w], length);
            if (offset == Transport.CLAIM_FAILED)
            {
                increment(EsaCounter.TX_FULL);
                continue;
            }
            final MemorySegment tx = transport.txMemory();
            MemorySegment.copy(m, o, tx, offset, length);
            InaggHeader.setWorkerId(tx, offset, w);
            transport.commit();
            increment(EsaCounter.RESULTS_SENT);
        }
    }

    /** Sends the complete sum to every worker: the request's header (job, slot, copy, sequence) with the sums. */
    private void multicastFromPool(final int i, final EsaJobConfig job, final MemorySegment m, final long o)
    {
        final int length = InaggHeader.messageLength(pool.lanes(i));
        final int[] peers = workerPeers[job.jobId()];
        // Built once in switch-private memory: a committed message may already be consumed (and a ring may zero it)
        // while later copies are made, so never copy from one.
        MemorySegment.copy(m, o, staging, 0, InaggHeader.LENGTH);
        InaggHeader.setFlags(staging, 0, pool.flags(i) | InaggHeader.FLAG_RESULT);
        InaggHeader.setElementCount(staging, 0, pool.lanes(i));
        InaggHeader.setNextExponent(staging, 0, pool.exponent(i));
        pool.readLanes(i, staging, InaggHeader.PAYLOAD_OFFSET);
        for (int w = 0; w < job.workers(); w++)
        {
            final long offset = transport.claim(peers[w], length);
            if (offset == Transport.CLAIM_FAILED)
            {
                increment(EsaCounter.TX_FULL);
                continue;
            }
            final MemorySegment tx = transport.txMemory();
            MemorySegment.copy(staging, 0, tx, offset, length);
            InaggHeader.setWorkerId(tx, offset, w);
            transport.commit();
            increment(EsaCounter.RESULTS_SENT);
        }
    }

    /** The holder's partial sum and bitmap go to its server; the aggregator is freed with a tombstone. */
    private void evict(final int i, final int reason, final EsaCounter counter)
    {
        increment(counter);
        sendPartial(i, reason);
        pool.release(i, true);
    }

    private void sendPartial(final int i, final int reason)
    {
        final EsaJobConfig holder = jobs[pool.holderJob(i)];
        final int lanes = pool.lanes(i);
        final int words = EsaWire.bitmapWords(holder.workers());
        final int length = EsaWire.partialLength(lanes, holder.workers());
        final long offset = transport.claim(holder.parameterServerPeer(), length);
        if (offset == Transport.CLAIM_FAILED)
        {
            // Lost like any packet: the block's workers retransmit to the server, which never saw these bits.
            increment(EsaCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        final int slotField = pool.slotField(i);
        InaggHeader.write(tx, offset, EsaWire.TYPE_PARTIAL, pool.flags(i), holder.jobId(), pool.count(i),
            slotField, slotField >>> 15, pool.holderSequence(i), lanes + words, pool.blockExponent(i),
            pool.exponent(i), pool.holderPriority(i));
        InaggHeader.setStatus(tx, offset, reason);
        EsaWire.setPartialBitmapWords(tx, offset, words);
        pool.readLanes(i, tx, offset + InaggHeader.PAYLOAD_OFFSET);
        final long bitmapOffset = offset + InaggHeader.PAYLOAD_OFFSET + (long)lanes * Integer.BYTES;
        for (int k = 0; k < words; k++)
        {
            tx.set(EsaWire.I32, bitmapOffset + (long)k * Integer.BYTES, pool.bitmapWord(i, k));
        }
        transport.commit();
        if (reason == EsaWire.REASON_COMPLETE)
        {
            increment(EsaCounter.RESULT_COPIES);
            add(EsaCounter.RESULT_COPY_BYTES, length);
        }
        else
        {
            add(EsaCounter.FALLBACK_BYTES, length);
        }
    }

    /** The packet goes to its job's server as it came, with the reason in Status. */
    private void forward(final EsaJobConfig job, final MemorySegment m, final long o, final int length,
        final int reason, final EsaCounter counter)
    {
        increment(counter);
        final long offset = transport.claim(job.parameterServerPeer(), length);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(EsaCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        MemorySegment.copy(m, o, tx, offset, length);
        InaggHeader.setStatus(tx, offset, reason);
        transport.commit();
        add(EsaCounter.FALLBACK_BYTES, length);
    }

    private void increment(final EsaCounter counter)
    {
        counters[counter.ordinal()].incrementRelease();
    }

    private void add(final EsaCounter counter, final long delta)
    {
        counters[counter.ordinal()].getAndAddRelease(delta);
    }
}
