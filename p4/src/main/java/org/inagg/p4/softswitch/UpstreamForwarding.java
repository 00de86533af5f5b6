package org.inagg.p4.softswitch;

import java.lang.foreign.MemorySegment;

import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.pipeline.AggregationNode;
import org.inagg.p4.pipeline.NodeCounter;
import org.inagg.p4.pipeline.NodeCounters;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;

/**
 * Two-level aggregation ({@link UpstreamAggregation}) of one job: the switch holds only its own workers' sum, not the
 * result, so a complete round goes up to the job's parameter server as a PARTIAL (reason SUBTREE) with their bitmap,
 * and a packet of a round already complete goes there as it came (reason RETRANSMIT), for the server to add or answer.
 * A forwarded packet carries the job's session, and so does a PARTIAL (its Session field), so that the server starts
 * a new run of the job when this switch did and never merges an older run's sum into it (docs/sessions.md). Lost like
 * any packet if the transport is full: the workers retransmit, and their retransmissions reach the server raw.
 * <p>
 * Every collective and reduce op goes up: the PARTIAL's Flags carry the round's collective and op, a REDUCE_SCATTER or
 * ALL_GATHER PARTIAL its Owner ({@link EsaWire}); an ALL_GATHER PARTIAL holds the Owner's lanes if the Owner is a
 * local worker and none otherwise. A forwarded REDUCE_SCATTER or ALL_GATHER packet keeps its Owner in Priority and
 * Status, so it carries no reason code there (the server reads none from a raw fragment).
 * <p>
 * With {@link UpstreamAggregation#resultsDown()} the PARTIALs carry {@link EsaWire#FLAG_RESULTS_DOWN}, and the server's
 * RESULT of the round comes back here once: taken only from the job's parameter server and of the job's session, it is
 * multicast to the local workers from the received message itself ({@link AggregationNode#multicast}, as
 * {@link ResultMulticast} sends a one-level round: lanes to a REDUCE_SCATTER round's Owner only), with no copy kept.
 */
final class UpstreamForwarding implements RoundOutput
{
    private final Transport transport;
    private final NodeCounters<SwitchCounter> counters;
    private final AggregationNode<SlotJob> node;
    private final int parameterServerPeer;
    /** {@link EsaWire#FLAG_RESULTS_DOWN} if the server's results come down through this switch, else 0. */
    private final int resultsDownFlag;
    /** The local workers as the 32-bit bitmap words of a PARTIAL. */
    private final int[] bitmap;
    /** The other workers of the job, as a bitmap: a relayed result skips them. */
    private final int[] remote;

    UpstreamForwarding(final AggregationNode<SlotJob> node, final NodeCounters<SwitchCounter> counters,
        final UpstreamAggregation upstream, final int workers)
    {
        this.node = node;
        this.transport = node.transport();
        this.counters = counters;
        this.parameterServerPeer = upstream.parameterServerPeer();
        this.resultsDownFlag = upstream.resultsDown() ? EsaWire.FLAG_RESULTS_DOWN : 0;
        this.bitmap = new int[EsaWire.bitmapWords(workers)];
        for (final int worker : upstream.localWorkers())
        {
            bitmap[worker >>> 5] |= 1 << (worker & 31);
        }
        this.remote = new int[bitmap.length];
        for (int k = 0; k < bitmap.length; k++)
        {
            remote[k] = ~bitmap[k];
        }
    }

    @Override
    public void complete(final SlotJob job, final int copyIndex, final MemorySegment m, final long o,
        final int owner)
    {
        final int lanes = job.pool.lanes(copyIndex);
        final int words = bitmap.length;
        final int collective = InaggHeader.collective(m, o);
        final boolean allReduce = collective == InaggHeader.COLLECTIVE_ALL_REDUCE;
        final long offset = transport.claim(parameterServerPeer,
            EsaWire.partialLength(lanes, job.workers(), collective));
        if (offset == Transport.CLAIM_FAILED)
        {
            counters.increment(NodeCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        EsaWire.writePartialHeader(tx, offset,
            InaggHeader.flags(m, o) & (InaggHeader.FLAG_INT32 | InaggHeader.COLLECTIVE_MASK | InaggHeader.OP_MASK)
                | resultsDownFlag,
            job.jobId(), job.membership().session(), InaggHeader.slotField(m, o), InaggHeader.sequence(m, o), lanes,
            words, InaggHeader.blockExponent(m, o), job.pool.exponent(copyIndex),
            allReduce ? InaggHeader.priority(m, o) : 0, EsaWire.REASON_SUBTREE);
        job.pool.readLanes(copyIndex, tx, offset + InaggHeader.PAYLOAD_OFFSET);
        for (int k = 0; k < words; k++)
        {
            EsaWire.setPartialBitmapWord(tx, offset, lanes, k, bitmap[k]);
        }
        if (!allReduce)
        {
            EsaWire.setPartialOwner(tx, offset, owner);
        }
        transport.commit();
        counters.increment(SwitchCounter.UPSTREAM_PARTIALS);
    }

    @Override
    public void completedAgain(final SlotJob job, final int copyIndex, final MemorySegment m, final long o,
        final int length, final int worker, final int owner)
    {
        final long offset = transport.claim(parameterServerPeer, length);
        if (offset == Transport.CLAIM_FAILED)
        {
            counters.increment(NodeCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        MemorySegment.copy(m, o, tx, offset, length);
        if (InaggHeader.collective(m, o) == InaggHeader.COLLECTIVE_ALL_REDUCE)
        {
            InaggHeader.setStatus(tx, offset, EsaWire.REASON_RETRANSMIT);
        }
        transport.commit();
        counters.increment(SwitchCounter.UPSTREAM_FORWARDS);
    }

    @Override
    public boolean relaysResults()
    {
        return resultsDownFlag != 0;
    }

    /**
     * The server's RESULT of a round of the local workers: from the job's parameter server (else a source mismatch), of
     * the job's session (else stale, unanswered: the server is no worker to REJECT), no more lanes than the job's and
     * an Owner that is a worker of the job; multicast to the local workers, counted once
     * ({@link SwitchCounter#RESULTS_RELAYED}) and per copy ({@link SwitchCounter#RESULTS_SENT}). A job that does not
     * relay counts it malformed, as any RESULT sent to a switch.
     */
    @Override
    public void fromServer(final SlotJob job, final MemorySegment m, final long o, final int length, final int peer)
    {
        if (resultsDownFlag == 0)
        {
            counters.increment(NodeCounter.DROP_MALFORMED);
            return;
        }
        if (!node.admitResult(job, m, o, peer, parameterServerPeer))
        {
            return;
        }
        if (InaggHeader.collective(m, o) != InaggHeader.COLLECTIVE_ALL_REDUCE
            && InaggHeader.owner(m, o) >= job.workers())
        {
            counters.increment(NodeCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        if (InaggHeader.elementCount(m, o) > job.config.lanesPerPacket())
        {
            counters.increment(NodeCounter.DROP_BAD_SIZE);
            return;
        }
        counters.increment(SwitchCounter.RESULTS_RELAYED);
        node.multicast(job, m, o, length, AggregationNode.lanesTo(m, o), remote);
    }
}
