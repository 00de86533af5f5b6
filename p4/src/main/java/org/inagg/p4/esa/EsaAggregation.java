package org.inagg.p4.esa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.inagg.p4.pipeline.AggregationNode;
import org.inagg.p4.pipeline.AggregationStrategy;
import org.inagg.p4.pipeline.NodeCounter;
import org.inagg.p4.pipeline.NodeCounters;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

/**
 * The ESA switch's aggregation, after the {@link AggregationNode}'s parse and job table: one pool of aggregators
 * shared by every job ({@link AggregatorPool}), the rules of {@link EsaSwitch}, and a parameter server per job for
 * what the switch does not finish. A worker's packet passes the node's admission first (worker id, source, session);
 * a result from the job's server must come from it and be of the job's current session. A new session of a job (a
 * worker rejoined as a new process) releases its aggregators and tombstones: the old run's partial sums never reach
 * the new run.
 * <p>
 * Every collective and reduce op of docs/wire-format.md is carried as the slot switch carries it: the aggregators
 * combine with the op and hold an ALL_GATHER Owner's lanes, a REDUCE_SCATTER result's lanes go to the Owner alone, a
 * PARTIAL names the block's collective, op and Owner ({@link EsaWire}), and the parameter server finishes a block the
 * switch could not with the same semantics. The P4 programs' ESA jobs still carry ALL_REDUCE SUM only.
 */
final class EsaAggregation implements AggregationStrategy<EsaJob>
{
    private static final int JOBS = InaggHeader.MAX_JOB_ID + 1;

    private final AggregationNode<EsaJob> node;
    private final NodeCounters<EsaCounter> counters;
    private final Transport transport;
    private final MemorySegment staging;
    private final EsaSwitchSettings settings;
    private final AggregatorPool pool;
    private final boolean preemptive;
    /** The installed jobs by id (the node's table, for the holder of an aggregator). */
    private final EsaJob[] jobs = new EsaJob[JOBS];
    private final long[] remainingBytes = new long[JOBS];
    private final int[] tablePriority = new int[JOBS];

    EsaAggregation(final AggregationNode<EsaJob> node, final NodeCounters<EsaCounter> counters,
        final EsaSwitchSettings settings)
    {
        this.node = node;
        this.counters = counters;
        this.transport = node.transport();
        this.staging = Arena.ofAuto().allocate(transport.maxMessageLength(), 64);
        this.settings = settings;
        this.pool = new AggregatorPool(settings.aggregators(), settings.maxWorkers(), settings.lanesPerAggregator());
        this.preemptive = settings.mode() == AllocationMode.PREEMPTIVE;
    }

    int tablePriority(final int jobId)
    {
        return tablePriority[jobId];
    }

    /** Agent thread: the job's remaining bytes, from which shortest-remaining-first priorities follow. */
    void remainingBytes(final int jobId, final long bytes)
    {
        if (jobs[jobId] != null)
        {
            remainingBytes[jobId] = bytes;
            refreshPriority(jobId);
        }
    }

    @Override
    public NodeCounter parse(final MemorySegment m, final long o, final int type)
    {
        if (type != MessageType.AGGREGATE)
        {
            return NodeCounter.DROP_MALFORMED;
        }
        // Reserved values are dropped here, as the P4 programs do; every other collective and op is carried.
        return (InaggHeader.flags(m, o) & InaggHeader.FLAG_RESERVED) != 0 || InaggHeader.hasReservedCollectiveBits(m, o)
            ? NodeCounter.DROP_UNSUPPORTED : null;
    }

    @Override
    public void aggregate(final EsaJob job, final MemorySegment m, final long o, final int length, final int peer)
    {
        if ((InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) != 0)
        {
            fromServer(job, m, o, length, peer);
        }
        else
        {
            fromWorker(job, m, o, length, peer);
        }
    }

    @Override
    public void installed(final EsaJob job, final EsaJob previous)
    {
        if (previous != null)
        {
            pool.releaseJob(job.jobId());
        }
        jobs[job.jobId()] = job;
        startAfresh(job);
    }

    @Override
    public void removed(final EsaJob job)
    {
        jobs[job.jobId()] = null;
        pool.releaseJob(job.jobId());
    }

    @Override
    public void sessionStarted(final EsaJob job)
    {
        pool.releaseJob(job.jobId());
        startAfresh(job);
    }

    private void startAfresh(final EsaJob job)
    {
        remainingBytes[job.jobId()] = job.config.totalBytes();
        tablePriority[job.jobId()] = settings.policy() == PriorityPolicy.SHORTEST_REMAINING_FIRST
            ? EsaSwitch.srfPriority(job.config.totalBytes()) : job.config.priority();
    }

    private void fromWorker(final EsaJob esaJob, final MemorySegment m, final long o, final int length,
        final int peer)
    {
        final EsaJobConfig job = esaJob.config;
        final int jobId = job.jobId();
        final int worker = InaggHeader.workerId(m, o);
        final int collective = InaggHeader.collective(m, o);
        final int owner = collective == InaggHeader.COLLECTIVE_ALL_REDUCE ? worker : InaggHeader.owner(m, o);
        if (owner >= job.workers())
        {
            counters.increment(NodeCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        if (!node.admit(esaJob, m, o, worker, peer))
        {
            return;
        }
        final int laneCount = InaggHeader.elementCount(m, o);
        // An ALL_GATHER round's lanes come from its Owner alone, and only from it (as the slot switch checks).
        if (laneCount > job.lanesPerPacket()
            || (collective == InaggHeader.COLLECTIVE_ALL_GATHER && (laneCount > 0) != (worker == owner)))
        {
            counters.increment(NodeCounter.DROP_BAD_SIZE);
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
                counters.increment(NodeCounter.DUPLICATES);
                return;
            }
            if (!pool.lanesMatch(i, laneCount))
            {
                counters.increment(NodeCounter.DROP_BAD_SIZE);
                return;
            }
            if (pool.seenAction(i, worker))
            {
                counters.increment(NodeCounter.DUPLICATES);
                return;
            }
            counters.increment(EsaCounter.CONTRIBUTIONS);
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
            if (!EsaSwitch.preempts(settings.mode(), jobId, sequence, priority, holder, pool.holderSequence(i),
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
        counters.increment(EsaCounter.ALLOCATIONS);
        counters.increment(EsaCounter.CONTRIBUTIONS);
        if (job.workers() == 1)
        {
            complete(i, job, m, o);
        }
    }


    /**
     * The packet's priority under {@link PriorityPolicy#HEADER}, else the job table's; a REDUCE_SCATTER or ALL_GATHER
     * packet has its Owner where the Priority byte is, so it takes the table's (the job's configured priority).
     */
    private int effectivePriority(final EsaJobConfig job, final MemorySegment m, final long o)
    {
        return settings.policy() == PriorityPolicy.HEADER && InaggHeader.collective(m, o)
            == InaggHeader.COLLECTIVE_ALL_REDUCE ? InaggHeader.priority(m, o) : tablePriority[job.jobId()];
    }

    private void refreshPriority(final int jobId)
    {
        if (settings.policy() == PriorityPolicy.SHORTEST_REMAINING_FIRST)
        {
            tablePriority[jobId] = EsaSwitch.srfPriority(remainingBytes[jobId]);
        }
    }

    private void complete(final int i, final EsaJobConfig job, final MemorySegment m, final long o)
    {
        counters.increment(EsaCounter.COMPLETIONS);
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
    private void fromServer(final EsaJob esaJob, final MemorySegment m, final long o, final int length,
        final int peer)
    {
        final EsaJobConfig job = esaJob.config;
        // A result of an earlier run of the job is dropped: its blocks were released when the session started.
        if (!node.admitResult(esaJob, m, o, peer, job.parameterServerPeer()))
        {
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
        counters.increment(EsaCounter.ACKS);
        node.multicast(esaJob, m, o, length, AggregationNode.lanesTo(m, o));
    }

    /**
     * Sends the complete result to every worker: the request's header (job, slot, copy, sequence, collective, op,
     * Owner) with the block's lanes; a REDUCE_SCATTER's lanes to its Owner alone, header-only to the others.
     */
    private void multicastFromPool(final int i, final EsaJobConfig job, final MemorySegment m, final long o)
    {
        final int length = InaggHeader.messageLength(pool.lanes(i));
        // Built once in switch-private memory: a committed message may already be consumed (and a ring may zero it)
        // while later copies are made, so never copy from one.
        MemorySegment.copy(m, o, staging, 0, InaggHeader.LENGTH);
        InaggHeader.setFlags(staging, 0, pool.flags(i) | InaggHeader.FLAG_RESULT);
        InaggHeader.setElementCount(staging, 0, pool.lanes(i));
        InaggHeader.setNextExponent(staging, 0, pool.exponent(i));
        pool.readLanes(i, staging, InaggHeader.PAYLOAD_OFFSET);
        node.multicast(jobs[job.jobId()], staging, 0, length,
            pool.collective(i) == InaggHeader.COLLECTIVE_REDUCE_SCATTER ? pool.owner(i) : AggregationNode.ALL_WORKERS);
    }

    /** The holder's partial sum and bitmap go to its server; the aggregator is freed with a tombstone. */
    private void evict(final int i, final int reason, final EsaCounter counter)
    {
        counters.increment(counter);
        sendPartial(i, reason);
        pool.release(i, true);
    }

    private void sendPartial(final int i, final int reason)
    {
        // The holder's job, which may not be the job of the packet that evicts it: its server, its workers' bitmap
        // and its session (a new session releases the job's aggregators, so the holder's is the job's current one).
        final EsaJob holderJob = jobs[pool.holderJob(i)];
        final EsaJobConfig holder = holderJob.config;
        final int lanes = pool.lanes(i);
        final int words = EsaWire.bitmapWords(holder.workers());
        final int collective = pool.collective(i);
        final int length = EsaWire.partialLength(lanes, holder.workers(), collective);
        final long offset = transport.claim(holder.parameterServerPeer(), length);
        if (offset == Transport.CLAIM_FAILED)
        {
            // Lost like any packet: the block's workers retransmit to the server, which never saw these bits.
            counters.increment(NodeCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        EsaWire.writePartialHeader(tx, offset, pool.flags(i), holder.jobId(), holderJob.membership().session(),
            pool.slotField(i), pool.holderSequence(i), lanes, words, pool.blockExponent(i), pool.exponent(i),
            pool.holderPriority(i), reason);
        pool.readLanes(i, tx, offset + InaggHeader.PAYLOAD_OFFSET);
        final long bitmapOffset = offset + InaggHeader.PAYLOAD_OFFSET + (long)lanes * Integer.BYTES;
        for (int k = 0; k < words; k++)
        {
            tx.set(EsaWire.I32, bitmapOffset + (long)k * Integer.BYTES, pool.bitmapWord(i, k));
        }
        if (collective != InaggHeader.COLLECTIVE_ALL_REDUCE)
        {
            EsaWire.setPartialOwner(tx, offset, pool.owner(i));
        }
        transport.commit();
        if (reason == EsaWire.REASON_COMPLETE)
        {
            counters.increment(EsaCounter.RESULT_COPIES);
            counters.add(EsaCounter.RESULT_COPY_BYTES, length);
        }
        else
        {
            counters.add(EsaCounter.FALLBACK_BYTES, length);
        }
    }

    /**
     * The packet goes to its job's server as it came, with the reason in Status; a REDUCE_SCATTER or ALL_GATHER packet
     * keeps its Owner there instead (the server reads no reason from a raw fragment).
     */
    private void forward(final EsaJobConfig job, final MemorySegment m, final long o, final int length,
        final int reason, final EsaCounter counter)
    {
        counters.increment(counter);
        final long offset = transport.claim(job.parameterServerPeer(), length);
        if (offset == Transport.CLAIM_FAILED)
        {
            counters.increment(NodeCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        MemorySegment.copy(m, o, tx, offset, length);
        if (InaggHeader.collective(m, o) == InaggHeader.COLLECTIVE_ALL_REDUCE)
        {
            InaggHeader.setStatus(tx, offset, reason);
        }
        transport.commit();
        counters.add(EsaCounter.FALLBACK_BYTES, length);
    }
}
