package org.inagg.p4.softswitch;

import java.lang.foreign.MemorySegment;

import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.p4.pipeline.AggregationNode;
import org.inagg.p4.pipeline.AggregationStrategy;
import org.inagg.p4.pipeline.NodeCounter;
import org.inagg.p4.pipeline.NodeCounters;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

/**
 * The software switch's aggregation: the P4 programs' slot pipeline after the job table. Worker check (and the Owner
 * of a REDUCE_SCATTER or ALL_GATHER), source and session ({@link AggregationNode#admit}) → slot check (slot in the
 * job's pool, lane count within the job's) → the {@link SlotPool} register actions (round, seen, count, lanes,
 * exponent) → decision: the W-th fresh contribution completes the slot and goes to the job's {@link RoundOutput}; any
 * packet of a complete round is the output's to answer (a complete round never takes another contribution); anything
 * else is absorbed or dropped and counted, never aggregated.
 * <p>
 * Collectives and reduce ops (docs/wire-format.md, "Collectives and reduce ops") are read from each packet's Flags:
 * the lanes combine with the op (SUM, MIN, MAX); an ALL_GATHER round stores the Owner's lanes and counts the others'
 * header-only contributions. A reserved collective, op or flag is dropped by the parser
 * ({@link SwitchCounter#DROP_UNSUPPORTED}). A two-level job's round goes up as a PARTIAL that carries its collective,
 * op and Owner ({@link UpstreamForwarding}).
 */
final class SlotAggregation implements AggregationStrategy<SlotJob>
{
    private final AggregationNode<SlotJob> node;
    private final NodeCounters<SwitchCounter> counters;
    private final AtomicCounter jobsGauge;
    private final AtomicCounter slotsGauge;
    private final AtomicCounter sessionsStarted;
    private int installedJobs;
    /** Installed jobs whose output relays their server's results ({@link RoundOutput#relaysResults}). */
    private int relayingJobs;
    private long installedSlots;

    SlotAggregation(final AggregationNode<SlotJob> node, final NodeCounters<SwitchCounter> counters,
        final AtomicCounter jobsGauge, final AtomicCounter slotsGauge, final AtomicCounter sessionsStarted)
    {
        this.node = node;
        this.counters = counters;
        this.jobsGauge = jobsGauge;
        this.slotsGauge = slotsGauge;
        this.sessionsStarted = sessionsStarted;
    }

    /**
     * A RESULT (to a switch: malformed) goes on to the job table only while some job relays its server's results
     * ({@link RoundOutput#relaysResults}); a switch without one counts it exactly as before.
     */
    @Override
    public NodeCounter parse(final MemorySegment m, final long o, final int type)
    {
        if (type != MessageType.AGGREGATE
            || ((InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) != 0 && relayingJobs == 0)
            || (InaggHeader.flags(m, o) & InaggHeader.FLAG_RESERVED) != 0)
        {
            return NodeCounter.DROP_MALFORMED;
        }
        return InaggHeader.hasReservedCollectiveBits(m, o) ? NodeCounter.DROP_UNSUPPORTED : null;
    }

    @Override
    public void aggregate(final SlotJob job, final MemorySegment m, final long o, final int length, final int peer)
    {
        if ((InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) != 0)
        {
            job.output.fromServer(job, m, o, length, peer);
            return;
        }
        final int worker = InaggHeader.workerId(m, o);
        final int collective = InaggHeader.collective(m, o);
        final int owner = collective == InaggHeader.COLLECTIVE_ALL_REDUCE ? worker : InaggHeader.owner(m, o);
        if (owner >= job.workers())
        {
            counters.increment(NodeCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        if (!node.admit(job, m, o, worker, peer))
        {
            return;
        }
        final int slot = InaggHeader.slotIndex(m, o);
        final int laneCount = InaggHeader.elementCount(m, o);
        if (slot >= job.config.slots())
        {
            counters.increment(SwitchCounter.DROP_BAD_SLOT);
            return;
        }
        final boolean gather = collective == InaggHeader.COLLECTIVE_ALL_GATHER;
        // An ALL_GATHER round's lanes come from its Owner alone, and only from it.
        if (laneCount > job.config.lanesPerPacket() || (gather && (laneCount > 0) != (worker == owner)))
        {
            counters.increment(NodeCounter.DROP_BAD_SIZE);
            return;
        }
        final SlotPool pool = job.pool;
        final int copyIndex = 2 * slot + InaggHeader.shadowCopy(m, o);
        final int round = pool.roundAction(copyIndex, InaggHeader.sequence(m, o),
            gather ? SlotPool.NO_LANE_COUNT : laneCount);
        switch (round)
        {
            case SlotPool.ROUND_STALE -> counters.increment(SwitchCounter.DROP_STALE);
            case SlotPool.ROUND_VIOLATION -> counters.increment(SwitchCounter.DROP_VIOLATION);
            case SlotPool.ROUND_BAD_SIZE -> counters.increment(NodeCounter.DROP_BAD_SIZE);
            case SlotPool.ROUND_COMPLETE -> job.output.completedAgain(job, copyIndex, m, o, length, worker, owner);
            default -> contribute(job, pool, copyIndex, m, o, worker, owner, gather);
        }
    }

    @SuppressWarnings("checkstyle:ParameterNumber")
    private void contribute(final SlotJob job, final SlotPool pool, final int copyIndex, final MemorySegment m,
        final long o, final int worker, final int owner, final boolean gather)
    {
        if (pool.seenAction(copyIndex, worker))
        {
            counters.increment(NodeCounter.DUPLICATES);
            return;
        }
        final int count = pool.countAction(copyIndex);
        final boolean first = count == 1;
        final int laneCount = InaggHeader.elementCount(m, o);
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
        counters.increment(SwitchCounter.CONTRIBUTIONS);
        if (count == job.contributors)
        {
            job.output.complete(job, copyIndex, m, o, owner);
        }
    }

    @Override
    public void installed(final SlotJob job, final SlotJob previous)
    {
        if (previous == null)
        {
            jobsGauge.setRelease(++installedJobs);
        }
        else
        {
            installedSlots -= previous.config.slots();
            if (previous.membership().session() != job.config.session())
            {
                sessionsStarted.incrementRelease();
            }
        }
        installedSlots += job.config.slots();
        slotsGauge.setRelease(installedSlots);
        if (previous != null && previous.output.relaysResults())
        {
            relayingJobs--;
        }
        if (job.output.relaysResults())
        {
            relayingJobs++;
        }
    }

    @Override
    public void removed(final SlotJob job)
    {
        jobsGauge.setRelease(--installedJobs);
        installedSlots -= job.config.slots();
        slotsGauge.setRelease(installedSlots);
        if (job.output.relaysResults())
        {
            relayingJobs--;
        }
    }

    @Override
    public void sessionStarted(final SlotJob job)
    {
        job.pool = job.newPool();
        sessionsStarted.incrementRelease();
    }
}
