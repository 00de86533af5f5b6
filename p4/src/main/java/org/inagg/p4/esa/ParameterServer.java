package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.agent.CounterRegistry;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;
import org.inagg.wire.WireCheck;

/**
 * The host that finishes what the switch could not aggregate, as an Agrona agent over any {@link Transport}.
 * <p>
 * Per block (job, sequence) it keeps a sum and the bitmap of the workers in it. A raw fragment (a worker's AGGREGATE
 * the switch forwarded) adds its worker if that bit is clear; a PARTIAL ({@link EsaWire}) adds its sum if its bitmap
 * is disjoint from the block's, is dropped if it is contained in it (a duplicate), and is dropped as well if it
 * overlaps it only in part: its sum cannot be split, and the workers it would have added are still waiting for the
 * result, so they retransmit, and a retransmission always reaches the server raw. Hence no contribution is ever
 * counted twice.
 * When the bitmap holds all W workers the block is complete: its result, in the switch's RESULT format, goes to every
 * worker (ESA) or to the switch (ATP, which frees its aggregator and multicasts it).
 * <p>
 * Completed sums (its own and the copies of the switch's) are kept, the last {@code retainedResults} per job, to answer
 * retransmissions: a fragment of a completed block is answered with the result, to its worker alone, and never merged.
 * <p>
 * The same server finishes two-level aggregation ({@link org.inagg.p4.softswitch.UpstreamAggregation}): switches send
 * the sums of their own workers as PARTIALs (reason {@link EsaWire#REASON_SUBTREE}), workers with no switch in front of
 * them send to the server directly and join here ({@link ServerJobConfig#answersJoins()}).
 */
public final class ParameterServer implements Agent, MessageHandler
{
    private static final int MAX_RECEIVE_BURSTS_PER_CYCLE = 64;

    private final Transport transport;
    private final int receiveBurst;
    private final int retainedResults;
    private final ServerJob[] jobs = new ServerJob[InaggHeader.MAX_JOB_ID + 1];
    private final ManyToOneConcurrentArrayQueue<ServerJobConfig> pendingJobs =
        new ManyToOneConcurrentArrayQueue<>(1024);
    private final AtomicCounter[] counters = new AtomicCounter[ServerCounter.values().length];

    /** A block being merged. */
    private static final class Block
    {
        final int[] bits;
        final int[] sum;
        final int lanes;
        final int flags;
        final int slotField;
        final int blockExponent;
        int nextExponent = InaggHeader.NO_EXPONENT;
        int count;

        Block(final int words, final int lanes, final int flags, final int slotField, final int blockExponent)
        {
            this.bits = new int[words];
            this.sum = new int[lanes];
            this.lanes = lanes;
            this.flags = flags & InaggHeader.FLAG_INT32;
            this.slotField = slotField;
            this.blockExponent = blockExponent;
        }
    }

    private static final class ServerJob
    {
        final ServerJobConfig config;
        final int[] peers;
        final Int2ObjectHashMap<Block> open = new Int2ObjectHashMap<>();
        final Int2ObjectHashMap<byte[]> completed = new Int2ObjectHashMap<>();
        final ArrayDeque<Integer> completedOrder = new ArrayDeque<>();

        ServerJob(final ServerJobConfig config)
        {
            this.config = config;
            this.peers = config.workerPeers();
        }
    }

    public ParameterServer(final Transport transport, final CounterRegistry registry, final int receiveBurst,
        final int retainedResults)
    {
        this.transport = transport;
        this.receiveBurst = receiveBurst;
        this.retainedResults = retainedResults;
        for (final ServerCounter counter : ServerCounter.values())
        {
            counters[counter.ordinal()] = registry.newCounter("parameter server: " + counter.label(), counter.typeId());
        }
    }

    /** Installs (or replaces, forgetting its blocks) a job; applied before the next message. Any thread. */
    public void addJob(final ServerJobConfig config)
    {
        if (!pendingJobs.offer(config))
        {
            throw new IllegalStateException("too many job changes pending; is the parameter server running?");
        }
    }

    public long counter(final ServerCounter counter)
    {
        return counters[counter.ordinal()].get();
    }

    /** Blocks of the job still being merged; agent thread or quiescent. */
    public int openBlocks(final int jobId)
    {
        return jobs[jobId] == null ? 0 : jobs[jobId].open.size();
    }

    @Override
    public String roleName()
    {
        return "inagg-parameter-server";
    }

    @Override
    public int doWork()
    {
        int work = applyControl();
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

    /** Applies queued job changes; the agent does this each cycle, a test or harness may call it directly. */
    public int applyControl()
    {
        int work = 0;
        ServerJobConfig config;
        while ((config = pendingJobs.poll()) != null)
        {
            jobs[config.jobId()] = new ServerJob(config);
            work++;
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
        increment(ServerCounter.RECEIVED);
        if (InaggHeader.check(m, o, length) != WireCheck.OK)
        {
            increment(ServerCounter.DROP_MALFORMED);
            return;
        }
        final ServerJob job = jobs[InaggHeader.jobId(m, o)];
        final int type = InaggHeader.type(m, o);
        if (type == MessageType.JOIN)
        {
            join(job, m, o, peer);
        }
        else if (job == null)
        {
            increment(ServerCounter.DROP_MALFORMED);
        }
        else if (type == MessageType.AGGREGATE && (InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) == 0)
        {
            raw(job, m, o);
        }
        else if (type == EsaWire.TYPE_PARTIAL)
        {
            partial(job, m, o);
        }
        else
        {
            increment(ServerCounter.DROP_MALFORMED);
        }
    }

    /**
     * A worker that sends to the server directly (a two-level plan's workers with no switch on their way) joins here,
     * answered as a switch answers: JOIN_ACK (Sequence = W, Slot Index = slots, Reserved = lanes) or REJECT with the
     * reason. Only jobs configured to answer JOINs do; a JOIN from any peer but the worker's registered one gets no
     * answer (no reply to a spoofed address).
     */
    private void join(final ServerJob job, final MemorySegment m, final long o, final int peer)
    {
        final int jobId = InaggHeader.jobId(m, o);
        final int worker = InaggHeader.workerId(m, o);
        final int reason;
        if (job != null && !job.config.answersJoins())
        {
            increment(ServerCounter.DROP_MALFORMED);
            return;
        }
        if (job == null)
        {
            reason = RejectReason.UNKNOWN_JOB;
        }
        else if (worker >= job.config.workers())
        {
            reason = RejectReason.WORKER_ID_OUT_OF_RANGE;
        }
        else if (job.peers[worker] != peer)
        {
            increment(ServerCounter.DROP_MALFORMED);
            return;
        }
        else if (InaggHeader.sequence(m, o) != job.config.workers())
        {
            reason = RejectReason.WORKER_COUNT_MISMATCH;
        }
        else
        {
            reason = 0;
        }
        final long offset = transport.claim(peer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(ServerCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        if (reason == 0)
        {
            InaggHeader.writeJoinAck(tx, offset, jobId, worker,
                job.config.joinSlots(), job.config.workers(), job.config.joinLanes());
            increment(ServerCounter.JOINS);
        }
        else
        {
            InaggHeader.writeReject(tx, offset, jobId, worker, reason);
            increment(ServerCounter.REJECTS);
        }
        transport.commit();
    }

    private void raw(final ServerJob job, final MemorySegment m, final long o)
    {
        final int worker = InaggHeader.workerId(m, o);
        final int sequence = InaggHeader.sequence(m, o);
        if (worker >= job.config.workers())
        {
            increment(ServerCounter.DROP_MALFORMED);
            return;
        }
        final byte[] result = job.completed.get(sequence);
        if (result != null)
        {
            // The worker may have lost the result (it retransmits only then); answering costs one packet.
            increment(ServerCounter.LATE);
            if (send(job.peers[worker], result, worker))
            {
                increment(ServerCounter.RETRANSMIT_REPLIES);
            }
            return;
        }
        final int lanes = InaggHeader.elementCount(m, o);
        final Block block = openBlock(job, sequence, m, o, lanes);
        if (block == null)
        {
            return;
        }
        final int word = worker >>> 5;
        final int bit = 1 << (worker & 31);
        if ((block.bits[word] & bit) != 0)
        {
            increment(ServerCounter.DUPLICATES);
            return;
        }
        block.bits[word] |= bit;
        block.count++;
        for (int k = 0; k < lanes; k++)
        {
            block.sum[k] += InaggHeader.element(m, o, k);
        }
        block.nextExponent = Math.max(block.nextExponent, InaggHeader.nextExponent(m, o));
        increment(ServerCounter.RAW_MERGED);
        if (block.count == job.config.workers())
        {
            finish(job, sequence, block);
        }
    }

    private void partial(final ServerJob job, final MemorySegment m, final long o)
    {
        final int words = EsaWire.partialBitmapWords(m, o);
        final int lanes = EsaWire.partialLanes(m, o);
        final int sequence = InaggHeader.sequence(m, o);
        if (words != EsaWire.bitmapWords(job.config.workers()) || lanes < 0)
        {
            increment(ServerCounter.DROP_MALFORMED);
            return;
        }
        if (job.completed.containsKey(sequence))
        {
            increment(ServerCounter.LATE);
            return;
        }
        if (InaggHeader.status(m, o) == EsaWire.REASON_COMPLETE)
        {
            // The switch's sum, already multicast in ESA; kept for retransmissions (and sent on in ATP).
            increment(ServerCounter.RESULT_COPIES);
            final byte[] result = new byte[InaggHeader.messageLength(lanes)];
            final MemorySegment r = MemorySegment.ofArray(result);
            MemorySegment.copy(m, o, r, 0, InaggHeader.LENGTH);
            InaggHeader.write(r, 0, MessageType.AGGREGATE, InaggHeader.flags(m, o) | InaggHeader.FLAG_RESULT,
                job.config.jobId(), 0, InaggHeader.slotIndex(m, o), InaggHeader.shadowCopy(m, o), sequence, lanes,
                InaggHeader.blockExponent(m, o), InaggHeader.nextExponent(m, o), 0);
            MemorySegment.copy(m, o + InaggHeader.PAYLOAD_OFFSET, r, InaggHeader.PAYLOAD_OFFSET,
                (long)lanes * Integer.BYTES);
            job.open.remove(sequence);
            retain(job, sequence, result);
            if (job.config.resultsViaSwitch())
            {
                sendToSwitch(job, result);
            }
            return;
        }
        final Block block = openBlock(job, sequence, m, o, lanes);
        if (block == null)
        {
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
            increment(ServerCounter.DUPLICATES);
            return;
        }
        if (overlap != 0)
        {
            increment(ServerCounter.OVERLAPS);
            return;
        }
        for (int k = 0; k < words; k++)
        {
            final int incoming = EsaWire.partialBitmapWord(m, o, k);
            block.bits[k] |= incoming;
            block.count += Integer.bitCount(incoming);
        }
        for (int k = 0; k < lanes; k++)
        {
            block.sum[k] += InaggHeader.element(m, o, k);
        }
        block.nextExponent = Math.max(block.nextExponent, InaggHeader.nextExponent(m, o));
        increment(ServerCounter.PARTIALS_MERGED);
        if (block.count == job.config.workers())
        {
            finish(job, sequence, block);
        }
    }

    private Block openBlock(final ServerJob job, final int sequence, final MemorySegment m, final long o,
        final int lanes)
    {
        Block block = job.open.get(sequence);
        if (block == null)
        {
            block = new Block(EsaWire.bitmapWords(job.config.workers()), lanes, InaggHeader.flags(m, o),
                InaggHeader.slotField(m, o), InaggHeader.blockExponent(m, o));
            job.open.put(sequence, block);
        }
        else if (block.lanes != lanes)
        {
            increment(ServerCounter.DROP_MALFORMED);
            return null;
        }
        return block;
    }

    private void finish(final ServerJob job, final int sequence, final Block block)
    {
        increment(ServerCounter.COMPLETED);
        job.open.remove(sequence);
        final byte[] result = new byte[InaggHeader.messageLength(block.lanes)];
        final MemorySegment r = MemorySegment.ofArray(result);
        InaggHeader.write(r, 0, MessageType.AGGREGATE, block.flags | InaggHeader.FLAG_RESULT, job.config.jobId(), 0,
            block.slotField, block.slotField >>> 15, sequence, block.lanes, block.blockExponent, block.nextExponent, 0);
        for (int k = 0; k < block.lanes; k++)
        {
            InaggHeader.setElement(r, 0, k, block.sum[k]);
        }
        retain(job, sequence, result);
        if (job.config.resultsViaSwitch())
        {
            sendToSwitch(job, result);
        }
        else
        {
            for (int w = 0; w < job.config.workers(); w++)
            {
                if (send(job.peers[w], result, w))
                {
                    increment(ServerCounter.RESULTS_SENT);
                }
            }
        }
    }

    private void retain(final ServerJob job, final int sequence, final byte[] result)
    {
        job.completed.put(sequence, result);
        job.completedOrder.addLast(sequence);
        while (job.completedOrder.size() > retainedResults)
        {
            job.completed.remove((int)job.completedOrder.pollFirst());
        }
    }

    private void sendToSwitch(final ServerJob job, final byte[] result)
    {
        if (send(job.config.switchPeer(), result, 0))
        {
            increment(ServerCounter.RESULTS_SENT);
        }
    }

    private boolean send(final int peer, final byte[] result, final int worker)
    {
        final long offset = transport.claim(peer, result.length);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(ServerCounter.TX_FULL);
            return false;
        }
        final MemorySegment tx = transport.txMemory();
        MemorySegment.copy(MemorySegment.ofArray(result), 0, tx, offset, result.length);
        InaggHeader.setWorkerId(tx, offset, worker);
        transport.commit();
        return true;
    }

    private void increment(final ServerCounter counter)
    {
        counters[counter.ordinal()].incrementRelease();
    }
}
