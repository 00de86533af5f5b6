package org.inagg.p4.esa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.inagg.p4.pipeline.AggregationNode;
import org.inagg.p4.pipeline.AggregationStrategy;
import org.inagg.p4.pipeline.LaneOps;
import org.inagg.p4.pipeline.NodeCounter;
import org.inagg.p4.pipeline.NodeCounters;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

/**
 * The parameter server's aggregation, after the {@link AggregationNode}'s parse and job table: per block, a sum and
 * the bitmap of the workers in it, merged from raw fragments and PARTIALs as {@link ParameterServer} describes.
 * <p>
 * <b>Collectives.</b> Every collective and reduce op of docs/wire-format.md, with the software switch's semantics, so
 * that a two-level job's results are bit for bit a one-level job's: lanes combine with the op (SUM, MIN, MAX; a
 * PARTIAL's sum is combined with the same op, and SUM, MIN and MAX being associative and commutative, the order in
 * which raw fragments and PARTIALs come does not matter); an ALL_GATHER block keeps its Owner's lanes (from the
 * Owner's raw fragment or the PARTIAL whose bitmap has the Owner); a REDUCE_SCATTER result goes with its lanes to the
 * Owner and header-only to the other workers, and a retransmission of a completed block is answered the same way.
 * <p>
 * <b>Sessions.</b> A job's run on the server follows the run its workers are in: a direct worker that rejoins as a new
 * process starts a new session here (the server answers its JOINs), and a packet a switch forwards with a newer
 * session than the server's (the switch's workers rejoined it) starts that session here. Either way the job's block
 * table is freed, so that the new run's sequences, which start again, are never taken for late duplicates of the old
 * run's; a fragment of an older session is dropped (and, from a direct worker, answered with REJECT), and results
 * carry the job's session. A PARTIAL carries the session of its block's job at the switch that sent it: it is merged
 * if that is the server's current session, starts a newer one as a forwarded fragment does (from a switch of the job
 * only), and is dropped otherwise, unanswered: an older run's sum delayed past a restart never reaches the new run.
 */
final class ServerAggregation implements AggregationStrategy<ServerJob>
{
    /** The lane count of an ALL_GATHER fragment for {@link #blockFor}: neither checked nor set by it. */
    private static final int NO_LANE_COUNT = -1;

    private final AggregationNode<ServerJob> node;
    private final NodeCounters<ServerCounter> counters;
    private final Transport transport;
    /** A result is built here once and copied to each destination. */
    private final MemorySegment staging;

    ServerAggregation(final AggregationNode<ServerJob> node, final NodeCounters<ServerCounter> counters)
    {
        this.node = node;
        this.counters = counters;
        this.transport = node.transport();
        this.staging = Arena.ofAuto().allocate(transport.maxMessageLength(), 64);
    }

    @Override
    public NodeCounter parse(final MemorySegment m, final long o, final int type)
    {
        if (type == MessageType.AGGREGATE && (InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) == 0)
        {
            // Every collective and op of docs/wire-format.md ("Collectives and reduce ops"); reserved ones are not.
            return (InaggHeader.flags(m, o) & InaggHeader.FLAG_RESERVED) != 0
                || InaggHeader.hasReservedCollectiveBits(m, o) ? NodeCounter.DROP_UNSUPPORTED : null;
        }
        if (type != EsaWire.TYPE_PARTIAL)
        {
            return NodeCounter.DROP_MALFORMED;
        }
        return InaggHeader.hasReservedCollectiveBits(m, o) ? NodeCounter.DROP_UNSUPPORTED : null;
    }

    @Override
    public void aggregate(final ServerJob job, final MemorySegment m, final long o, final int length,
        final int peer)
    {
        if (InaggHeader.type(m, o) == EsaWire.TYPE_PARTIAL)
        {
            partial(job, m, o, peer);
        }
        else
        {
            raw(job, m, o, peer);
        }
    }

    @Override
    public void installed(final ServerJob job, final ServerJob previous)
    {
    }

    @Override
    public void removed(final ServerJob job)
    {
    }

    @Override
    public void sessionStarted(final ServerJob job)
    {
        job.reset();
    }

    /**
     * Whether a raw fragment is of the job's current session. One from the worker's own peer (a direct worker) of
     * another session is stale and answered as the switch answers it; one from a switch, as {@link #followSwitch}.
     */
    private boolean currentSession(final ServerJob job, final MemorySegment m, final long o, final int worker,
        final int peer)
    {
        if (job.membership().isCurrent(InaggHeader.session(m, o)))
        {
            return true;
        }
        if (peer == job.peers[worker])
        {
            counters.increment(NodeCounter.DROP_STALE_SESSION);
            node.rejectStale(job, m, o, worker, peer);
            return false;
        }
        return followSwitch(job, m, o, peer);
    }

    /**
     * Whether a PARTIAL is of the job's current session, or of a newer one a switch of the job started, which starts it
     * here; anything else is dropped and counted, unanswered. Its sender is noted as a switch of the job when the
     * PARTIAL is of the current session, or whatever its session when the job has no configured switch: such a job
     * knows its switches only by their PARTIALs, and a server that first hears from its switch after a restart (its
     * own, or the workers' before any block completed) would otherwise drop that switch's every packet for good.
     */
    private boolean partialSession(final ServerJob job, final MemorySegment m, final long o, final int peer)
    {
        final boolean current = job.membership().isCurrent(InaggHeader.session(m, o));
        if (current || !job.switchConfigured())
        {
            job.noteUpstream(peer);
        }
        return current || followSwitch(job, m, o, peer);
    }

    /**
     * A switch's packet (a forwarded fragment or a PARTIAL) of another session than the job's: an older one is stale,
     * from anyone; a newer one from a switch of the job starts that session here, from any other peer it is a source
     * mismatch.
     */
    private boolean followSwitch(final ServerJob job, final MemorySegment m, final long o, final int peer)
    {
        final int session = InaggHeader.session(m, o);
        final int ahead = (session - job.membership().session()) & 0xFFFF;
        if (ahead >= 0x8000)
        {
            counters.increment(NodeCounter.DROP_STALE_SESSION);
            return false;
        }
        if (!job.isUpstream(peer))
        {
            // Only a switch that forwards this job's PARTIALs may move it to a newer session: anyone else's packet
            // would otherwise free every block and abort the direct workers' run (REJECT STALE_SESSION).
            counters.increment(NodeCounter.DROP_SOURCE_MISMATCH);
            return false;
        }
        node.adoptSession(job, session);
        return true;
    }

    private void raw(final ServerJob job, final MemorySegment m, final long o, final int peer)
    {
        final int worker = InaggHeader.workerId(m, o);
        final int sequence = InaggHeader.sequence(m, o);
        final int collective = InaggHeader.collective(m, o);
        final int owner = collective == InaggHeader.COLLECTIVE_ALL_REDUCE ? worker : InaggHeader.owner(m, o);
        if (worker >= job.workers() || owner >= job.workers())
        {
            counters.increment(NodeCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        if (!currentSession(job, m, o, worker, peer))
        {
            return;
        }
        final int lanes = InaggHeader.elementCount(m, o);
        final boolean gather = collective == InaggHeader.COLLECTIVE_ALL_GATHER;
        if (gather && (lanes > 0) != (worker == owner))
        {
            // An ALL_GATHER round's lanes come from its Owner alone, and only from it (as the switch checks).
            counters.increment(NodeCounter.DROP_BAD_SIZE);
            return;
        }
        final ServerBlock block = blockFor(job, sequence, m, o, gather ? NO_LANE_COUNT : lanes, owner);
        if (block == null)
        {
            return;
        }
        if (block.state == ServerBlock.DONE)
        {
            // The worker may have lost the result (it retransmits only then); answering costs one packet.
            counters.increment(ServerCounter.LATE);
            if (sendResult(job, block, job.peers[worker], worker, withLanes(block, worker)))
            {
                counters.increment(ServerCounter.RETRANSMIT_REPLIES);
            }
            return;
        }
        final int word = worker >>> 5;
        final int bit = 1 << (worker & 31);
        if ((block.bits[word] & bit) != 0)
        {
            counters.increment(NodeCounter.DUPLICATES);
            return;
        }
        mergeLanes(block, m, o, lanes, gather);
        block.bits[word] |= bit;
        block.count++;
        block.nextExponent = Math.max(block.nextExponent, InaggHeader.nextExponent(m, o));
        counters.increment(ServerCounter.RAW_MERGED);
        if (block.count == job.config.workers())
        {
            finish(job, block);
        }
    }

    private void partial(final ServerJob job, final MemorySegment m, final long o, final int peer)
    {
        final int words = EsaWire.partialBitmapWords(m, o);
        final int lanes = EsaWire.partialLanes(m, o);
        final int sequence = InaggHeader.sequence(m, o);
        final int tail = job.config.workers() & 31;
        if (words != EsaWire.bitmapWords(job.config.workers()) || lanes < 0
            || (tail != 0 && EsaWire.partialBitmapWord(m, o, words - 1) >>> tail != 0))
        {
            // A bit past the job's workers would count a worker it does not have (and complete the block early).
            counters.increment(NodeCounter.DROP_MALFORMED);
            return;
        }
        final int collective = InaggHeader.collective(m, o);
        final int owner = collective == InaggHeader.COLLECTIVE_ALL_REDUCE ? 0 : EsaWire.partialOwner(m, o);
        if (owner < 0 || owner >= job.workers())
        {
            counters.increment(NodeCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        final boolean gather = collective == InaggHeader.COLLECTIVE_ALL_GATHER;
        if (gather && (lanes > 0) != EsaWire.partialHasWorker(m, o, owner))
        {
            // An ALL_GATHER partial holds its Owner's lanes if it speaks for the Owner, and none otherwise.
            counters.increment(NodeCounter.DROP_BAD_SIZE);
            return;
        }
        if (!partialSession(job, m, o, peer))
        {
            return;
        }
        final ServerBlock block = blockFor(job, sequence, m, o, gather ? NO_LANE_COUNT : lanes, owner);
        if (block == null)
        {
            return;
        }
        if (block.state == ServerBlock.DONE)
        {
            counters.increment(ServerCounter.LATE);
            return;
        }
        if (InaggHeader.status(m, o) == EsaWire.REASON_COMPLETE)
        {
            // The switch's sum, already multicast in ESA; kept for retransmissions (and sent on in ATP).
            counters.increment(ServerCounter.RESULT_COPIES);
            block.ensureLanes(lanes);
            LaneOps.store(block.lanes, 0, m, o + InaggHeader.PAYLOAD_OFFSET, lanes);
            block.laneCount = lanes;
            block.nextExponent = InaggHeader.nextExponent(m, o);
            block.blockExponent = InaggHeader.blockExponent(m, o);
            block.flags = InaggHeader.flags(m, o) & ServerBlock.KEPT_FLAGS;
            block.owner = owner;
            block.slotField = InaggHeader.slotField(m, o);
            block.state = ServerBlock.DONE;
            job.open--;
            if (job.config.resultsViaSwitch())
            {
                sendToSwitch(job, block);
            }
            return;
        }
        int fresh = 0;
        int overlap = 0;
        for (int k = 0; k < words; k++)
        {
            final int incoming = EsaWire.partialBitmapWord(m, o, k);
            fresh |= incoming & ~block.bits[k];
            overlap |= incoming & block.bits[k];
        }
        if (fresh == 0)
        {
            counters.increment(NodeCounter.DUPLICATES);
            return;
        }
        if (overlap != 0)
        {
            counters.increment(ServerCounter.OVERLAPS);
            return;
        }
        mergeLanes(block, m, o, lanes, gather);
        for (int k = 0; k < words; k++)
        {
            final int incoming = EsaWire.partialBitmapWord(m, o, k);
            block.bits[k] |= incoming;
            block.count += Integer.bitCount(incoming);
        }
        block.nextExponent = Math.max(block.nextExponent, InaggHeader.nextExponent(m, o));
        counters.increment(ServerCounter.PARTIALS_MERGED);
        if ((InaggHeader.flags(m, o) & EsaWire.FLAG_RESULTS_DOWN) != 0 && !job.config.resultsViaSwitch())
        {
            block.sendDownTo(peer, m, o);
        }
        if (block.count == job.config.workers())
        {
            finish(job, block);
        }
    }

    /**
     * Adds a fresh contribution's {@code n} lanes (a worker's or a PARTIAL's) to its open block, as the switch's
     * register actions do: the first contribution is stored, later ones are combined with the packet's reduce op; an
     * ALL_GATHER block stores its Owner's lanes, whenever they come, and nothing of the others'.
     */
    private static void mergeLanes(final ServerBlock block, final MemorySegment m, final long o, final int n,
        final boolean gather)
    {
        final long lanesOffset = o + InaggHeader.PAYLOAD_OFFSET;
        if (gather)
        {
            if (n > 0)
            {
                block.ensureLanes(n);
                block.laneCount = n;
                LaneOps.store(block.lanes, 0, m, lanesOffset, n);
            }
        }
        else if (block.count == 0)
        {
            LaneOps.store(block.lanes, 0, m, lanesOffset, n);
        }
        else
        {
            LaneOps.combine(block.lanes, 0, InaggHeader.reduceOp(m, o), m, lanesOffset, n);
        }
    }

    /** Whether a completed block's result to {@code worker} carries lanes: not a REDUCE_SCATTER's to a non-Owner. */
    private static boolean withLanes(final ServerBlock block, final int worker)
    {
        return block.collective() != InaggHeader.COLLECTIVE_REDUCE_SCATTER || worker == block.owner;
    }

    /**
     * The table entry of {@code sequence}'s slot copy: open (or opened here) for it, or DONE with its result; null
     * (counted) for a fragment older than the block its entry now holds, or whose lane count differs from its block's
     * ({@code lanes} {@link #NO_LANE_COUNT}: an ALL_GATHER fragment, whose lanes are its Owner's alone, is never
     * checked). A newer sequence takes the entry over, whatever the older block's state: a newer round of the same
     * slot copy is sent only after every worker had the older round's result, so an open older block has no worker
     * waiting for it (it was completed elsewhere, e.g. by the switch whose COMPLETE copy was lost); it is evicted and
     * counted.
     */
    private ServerBlock blockFor(final ServerJob job, final int sequence, final MemorySegment m, final long o,
        final int lanes, final int owner)
    {
        final ServerBlock block = job.entry(InaggHeader.slotField(m, o), Math.max(0, lanes));
        if (block.state != ServerBlock.FREE && block.sequence == sequence)
        {
            if (lanes != NO_LANE_COUNT && block.laneCount != lanes)
            {
                counters.increment(NodeCounter.DROP_BAD_SIZE);
                return null;
            }
            return block;
        }
        if (block.state != ServerBlock.FREE && sequence - block.sequence < 0)
        {
            counters.increment(ServerCounter.LATE);
            return null;
        }
        if (block.state == ServerBlock.OPEN)
        {
            counters.increment(ServerCounter.EVICTED);
            job.open--;
        }
        block.open(sequence, Math.max(0, lanes), InaggHeader.flags(m, o), InaggHeader.slotField(m, o),
            InaggHeader.blockExponent(m, o), owner);
        job.open++;
        return block;
    }

    /**
     * A complete block's result: to the switch (ATP), or to every worker, directly or, for the workers of a PARTIAL
     * that asked for it ({@link EsaWire#FLAG_RESULTS_DOWN}), once to that PARTIAL's switch, which relays it to them
     * (with the lanes if it is not a REDUCE_SCATTER, or its workers hold the Owner). Retransmissions of the block are
     * answered directly, whoever summed them.
     */
    private void finish(final ServerJob job, final ServerBlock block)
    {
        counters.increment(ServerCounter.COMPLETED);
        block.state = ServerBlock.DONE;
        job.open--;
        if (job.config.resultsViaSwitch())
        {
            sendToSwitch(job, block);
            return;
        }
        final boolean scatter = block.collective() == InaggHeader.COLLECTIVE_REDUCE_SCATTER;
        node.multicast(job, staging, 0, writeResult(job, block, staging, 0, true),
            scatter ? block.owner : AggregationNode.ALL_WORKERS, block.subtreeCount == 0 ? null : block.down);
        for (int i = 0; i < block.subtreeCount; i++)
        {
            final int peer = block.subtrees[i];
            if (sendResult(job, block, peer, 0, !scatter || peer == block.ownerSubtree))
            {
                counters.increment(ServerCounter.RESULTS_TO_SUBTREES);
            }
        }
    }

    private void sendToSwitch(final ServerJob job, final ServerBlock block)
    {
        if (sendResult(job, block, job.config.switchPeer(), 0, true))
        {
            counters.increment(NodeCounter.RESULTS_SENT);
        }
    }

    /** The block's result to one peer, as worker {@code worker}'s copy, with its lanes or header-only. */
    private boolean sendResult(final ServerJob job, final ServerBlock block, final int peer, final int worker,
        final boolean withLanes)
    {
        final long offset = transport.claim(peer,
            withLanes ? InaggHeader.messageLength(block.laneCount) : InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            counters.increment(NodeCounter.TX_FULL);
            return false;
        }
        final MemorySegment tx = transport.txMemory();
        writeResult(job, block, tx, offset, withLanes);
        InaggHeader.setWorkerId(tx, offset, worker);
        transport.commit();
        return true;
    }

    /**
     * A completed block as the switch's RESULT (worker id 0, the block's collective, op and Owner), with its lanes or
     * none; returns its length.
     */
    private static int writeResult(final ServerJob job, final ServerBlock block, final MemorySegment m, final long o,
        final boolean withLanes)
    {
        final int n = withLanes ? block.laneCount : 0;
        InaggHeader.write(m, o, MessageType.AGGREGATE, block.flags | InaggHeader.FLAG_RESULT, job.config.jobId(), 0,
            block.slotField, block.slotField >>> 15, block.sequence, n, block.blockExponent, block.nextExponent, 0);
        if (block.collective() != InaggHeader.COLLECTIVE_ALL_REDUCE)
        {
            InaggHeader.setOwner(m, o, block.owner);
        }
        InaggHeader.setSession(m, o, job.membership().session());
        LaneOps.write(block.lanes, 0, m, o + InaggHeader.PAYLOAD_OFFSET, n);
        return InaggHeader.messageLength(n);
    }
}
