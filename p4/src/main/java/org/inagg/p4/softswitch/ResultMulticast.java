package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.inagg.p4.pipeline.AggregationNode;
import org.inagg.p4.pipeline.NodeCounter;
import org.inagg.p4.pipeline.NodeCounters;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;

/**
 * A complete round's result to the job's workers, as the P4 programs' egress replicates it: built once in the
 * switch's own staging memory, then copied per destination with its worker id. Never copy from an already committed
 * message: its receiver may consume it, and a ring reclaim and zero it, while the later copies are still being made.
 * A REDUCE_SCATTER round's lanes go to its Owner alone, every other worker getting the header only.
 */
final class ResultMulticast implements RoundOutput
{
    private final AggregationNode<SlotJob> node;
    private final Transport transport;
    private final NodeCounters<SwitchCounter> counters;
    private final MemorySegment staging;

    ResultMulticast(final AggregationNode<SlotJob> node, final NodeCounters<SwitchCounter> counters)
    {
        this.node = node;
        this.transport = node.transport();
        this.counters = counters;
        this.staging = Arena.ofAuto().allocate(transport.maxMessageLength(), 64);
    }

    @Override
    public void complete(final SlotJob job, final int copyIndex, final MemorySegment m, final long o,
        final int owner)
    {
        final boolean scatter = InaggHeader.collective(m, o) == InaggHeader.COLLECTIVE_REDUCE_SCATTER;
        writeResult(job, copyIndex, m, o, 0, staging, 0, true);
        node.multicast(job, staging, 0, InaggHeader.messageLength(job.pool.lanes(copyIndex)),
            scatter ? owner : AggregationNode.ALL_WORKERS);
    }

    /** The result to the one worker that asked again: header-only for a REDUCE_SCATTER worker not the Owner. */
    @Override
    public void completedAgain(final SlotJob job, final int copyIndex, final MemorySegment m, final long o,
        final int length, final int worker, final int owner)
    {
        final boolean withLanes = InaggHeader.collective(m, o) != InaggHeader.COLLECTIVE_REDUCE_SCATTER
            || worker == owner;
        final long offset = transport.claim(job.membership().peer(worker),
            withLanes ? InaggHeader.messageLength(job.pool.lanes(copyIndex)) : InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            counters.increment(NodeCounter.TX_FULL);
            return;
        }
        writeResult(job, copyIndex, m, o, worker, transport.txMemory(), offset, withLanes);
        transport.commit();
        counters.increment(SwitchCounter.RETRANSMIT_REPLIES);
    }

    @Override
    public boolean relaysResults()
    {
        return false;
    }

    /** A one-level job takes no RESULT: malformed, as any RESULT sent to a switch. */
    @Override
    public void fromServer(final SlotJob job, final MemorySegment m, final long o, final int length, final int peer)
    {
        counters.increment(NodeCounter.DROP_MALFORMED);
    }

    /**
     * The result reuses the request's header (job, slot, copy, sequence, block exponent, collective, op, Owner,
     * session) with the round's lanes, or none ({@code withLanes} false).
     */
    private static void writeResult(
        final SlotJob job, final int copyIndex, final MemorySegment m, final long o, final int worker,
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
}
