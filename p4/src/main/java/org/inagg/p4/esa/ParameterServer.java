package org.inagg.p4.esa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;

import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorSpecies;

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
 * Completed sums (its own and the copies of the switch's) are kept to answer retransmissions: a fragment of a completed
 * block is answered with the result, to its worker alone, and never merged. Blocks live in a per-job table indexed,
 * as the switch's slot pool, by slot and shadow copy: a block is forgotten only when a newer round takes its slot
 * copy, and a worker sends that round only after every worker had the block's result (docs/protocol.md, "Slots,
 * rounds and shadow copies"). Indexing by sequence instead is unsafe at any table length: one slot waiting for a lost
 * packet does not stop the others, so the sequences in flight span up to a whole tensor. Entries are allocated on
 * first use and then reused (the table grows to twice the highest slot used), so a warm server allocates nothing per
 * message.
 * <p>
 * The same server finishes two-level aggregation ({@link org.inagg.p4.softswitch.UpstreamAggregation}): switches send
 * the sums of their own workers as PARTIALs (reason {@link EsaWire#REASON_SUBTREE}), workers with no switch in front of
 * them send to the server directly and join here ({@link ServerJobConfig#answersJoins()}).
 */
public final class ParameterServer implements Agent, MessageHandler
{
    private static final int MAX_RECEIVE_BURSTS_PER_CYCLE = 64;
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;

    private final Transport transport;
    private final int receiveBurst;
    private final int retainedResults;
    /** A result is built here once and copied to each destination. */
    private final MemorySegment staging;
    private final ServerJob[] jobs = new ServerJob[InaggHeader.MAX_JOB_ID + 1];
    private final ManyToOneConcurrentArrayQueue<ServerJobConfig> pendingJobs =
        new ManyToOneConcurrentArrayQueue<>(1024);
    private final AtomicCounter[] counters = new AtomicCounter[ServerCounter.values().length];
    private final JoinLog joinLog;

    /** Entry states of a job's block table. */
    private static final int FREE = 0;
    private static final int OPEN = 1;
    private static final int DONE = 2;

    /**
     * One entry of a job's block table: a block being merged (OPEN: sum and bitmap) or a completed one kept to answer
     * retransmissions (DONE: the result lanes). Entries are allocated on first use and reused for every later
     * sequence that maps to them, so a warm server allocates nothing per packet.
     */
    private static final class Block
    {
        final int[] bits;
        int[] lanes;
        int sequence;
        int state = FREE;
        int laneCount;
        int flags;
        int slotField;
        int blockExponent;
        int nextExponent;
        int count;

        Block(final int words, final int lanes)
        {
            this.bits = new int[words];
            this.lanes = new int[lanes];
        }

        void open(final int sequence, final int laneCount, final int flags, final int slotField,
            final int blockExponent)
        {
            this.sequence = sequence;
            this.state = OPEN;
            if (lanes.length < laneCount)
            {
                lanes = new int[laneCount];
            }
            Arrays.fill(lanes, 0, laneCount, 0);
            Arrays.fill(bits, 0);
            this.laneCount = laneCount;
            this.flags = flags & InaggHeader.FLAG_INT32;
            this.slotField = slotField;
            this.blockExponent = blockExponent;
            this.nextExponent = InaggHeader.NO_EXPONENT;
            this.count = 0;
        }
    }

    /**
     * A job and its block table, one entry per slot and shadow copy ({@code 2 * slot + copy}), as the switch's
     * {@code SlotPool}: an entry holds the blocks of one copy of one slot, round after round, and a newer round comes
     * only once every worker had the previous result of that copy. The table starts at {@code capacity} entries and
     * grows (to a power of two, at most {@code 2 * MAX_SLOTS}) when a higher slot is first used.
     */
    private static final class ServerJob
    {
        final ServerJobConfig config;
        final int[] peers;
        /** Who may JOIN the job (sessions: always 0 on the parameter server; docs/sessions.md). */
        final JobMembership membership;
        Block[] table;
        int open;

        ServerJob(final ServerJobConfig config, final int capacity)
        {
            this.config = config;
            this.peers = config.workerPeers();
            this.membership = new JobMembership(config.jobId(), config.workers(), peers, config.joinCredentials(), 0,
                false);
            this.table = new Block[capacity];
        }

        /** The entry of the message's slot and shadow copy, allocated on first use. */
        Block entry(final int slotField, final int lanes)
        {
            final int i = ((slotField & (InaggHeader.MAX_SLOTS - 1)) << 1) | (slotField >>> 15);
            if (i >= table.length)
            {
                table = Arrays.copyOf(table, Integer.highestOneBit(i) << 1);
            }
            Block block = table[i];
            if (block == null)
            {
                block = new Block(EsaWire.bitmapWords(config.workers()), lanes);
                table[i] = block;
            }
            return block;
        }
    }

    /**
     * @param retainedResults initial block table entries per job (1..2^24, rounded up to a power of two, at most
     *                        {@code 2 * MAX_SLOTS}): one per slot copy the job uses; the table grows beyond it on first
     *                        use of a higher slot, so this only avoids that growth.
     */
    public ParameterServer(final Transport transport, final CounterRegistry registry, final int receiveBurst,
        final int retainedResults)
    {
        this.transport = transport;
        this.receiveBurst = receiveBurst;
        if (retainedResults < 1 || retainedResults > 1 << 24)
        {
            throw new IllegalArgumentException("retained results must be in 1..2^24, got " + retainedResults);
        }
        // Initial table entries per job; more than one per slot copy is never used.
        this.retainedResults = Math.min(2 * InaggHeader.MAX_SLOTS,
            1 << (32 - Integer.numberOfLeadingZeros(retainedResults - 1)));
        this.staging = Arena.ofAuto().allocate(transport.maxMessageLength(), 64);
        for (final ServerCounter counter : ServerCounter.values())
        {
            counters[counter.ordinal()] = registry.newCounter(counter, "parameter server: " + counter.label());
        }
        this.joinLog = new JoinLog(ParameterServer.class, "parameter server", transport);
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
        return jobs[jobId] == null ? 0 : jobs[jobId].open;
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
            jobs[config.jobId()] = new ServerJob(config, retainedResults);
            joinLog.jobInstalled(config.jobId(), config.toString());
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
            if (InaggHeader.isAllReduceSum(m, o))
            {
                raw(job, m, o);
            }
            else
            {
                // The server sums: ALL_REDUCE SUM only (docs/wire-format.md, "Collectives and reduce ops").
                increment(ServerCounter.DROP_UNSUPPORTED);
            }
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
        final int claimedWorkers = InaggHeader.sequence(m, o);
        if (job != null && !job.config.answersJoins())
        {
            increment(ServerCounter.DROP_MALFORMED);
            return;
        }
        final int decision = job == null ? JobMembership.REJECT
            : job.membership.join(worker, claimedWorkers, InaggHeader.session(m, o), InaggHeader.joinIncarnation(m, o),
                InaggHeader.joinCredential(m, o), peer, true);
        final int reason = job == null ? RejectReason.UNKNOWN_JOB : job.membership.rejectReason();
        if (decision == JobMembership.SPOOFED)
        {
            increment(ServerCounter.DROP_MALFORMED);
            joinLog.spoofed(jobId, worker, peer);
            return;
        }
        if (decision == JobMembership.BAD_CREDENTIAL)
        {
            increment(ServerCounter.DROP_BAD_CREDENTIAL);
            joinLog.badCredential(jobId, worker, peer);
            return;
        }
        final long offset = transport.claim(peer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(ServerCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        if (decision == JobMembership.ACCEPT)
        {
            InaggHeader.writeJoinAck(tx, offset, jobId, worker,
                job.config.joinSlots(), job.config.workers(), job.config.joinLanes(), job.membership.session());
            increment(ServerCounter.JOINS);
        }
        else
        {
            InaggHeader.writeReject(tx, offset, jobId, worker, reason, job == null ? 0 : job.membership.session(),
                reason == RejectReason.STALE_SESSION ? job.membership.sessionCause() : 0);
            increment(ServerCounter.REJECTS);
        }
        transport.commit();
        if (decision == JobMembership.ACCEPT)
        {
            joinLog.joined(jobId, worker, job.config.workers(), peer);
        }
        else
        {
            joinLog.rejected(jobId, worker, claimedWorkers, reason, peer);
        }
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
        final int lanes = InaggHeader.elementCount(m, o);
        final Block block = blockFor(job, sequence, m, o, lanes);
        if (block == null)
        {
            return;
        }
        if (block.state == DONE)
        {
            // The worker may have lost the result (it retransmits only then); answering costs one packet.
            increment(ServerCounter.LATE);
            if (sendResult(job, block, job.peers[worker], worker))
            {
                increment(ServerCounter.RETRANSMIT_REPLIES);
            }
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
        addLanes(block.lanes, m, o, lanes);
        block.nextExponent = Math.max(block.nextExponent, InaggHeader.nextExponent(m, o));
        increment(ServerCounter.RAW_MERGED);
        if (block.count == job.config.workers())
        {
            finish(job, block);
        }
    }

    private void partial(final ServerJob job, final MemorySegment m, final long o)
    {
        final int words = EsaWire.partialBitmapWords(m, o);
        final int lanes = EsaWire.partialLanes(m, o);
        final int sequence = InaggHeader.sequence(m, o);
        final int tail = job.config.workers() & 31;
        if (words != EsaWire.bitmapWords(job.config.workers()) || lanes < 0
            || (tail != 0 && EsaWire.partialBitmapWord(m, o, words - 1) >>> tail != 0))
        {
            // A bit past the job's workers would count a worker it does not have (and complete the block early).
            increment(ServerCounter.DROP_MALFORMED);
            return;
        }
        final Block block = blockFor(job, sequence, m, o, lanes);
        if (block == null)
        {
            return;
        }
        if (block.state == DONE)
        {
            increment(ServerCounter.LATE);
            return;
        }
        if (InaggHeader.status(m, o) == EsaWire.REASON_COMPLETE)
        {
            // The switch's sum, already multicast in ESA; kept for retransmissions (and sent on in ATP).
            increment(ServerCounter.RESULT_COPIES);
            for (int k = 0; k < lanes; k++)
            {
                block.lanes[k] = InaggHeader.element(m, o, k);
            }
            block.nextExponent = InaggHeader.nextExponent(m, o);
            block.blockExponent = InaggHeader.blockExponent(m, o);
            block.flags = InaggHeader.flags(m, o) & InaggHeader.FLAG_INT32;
            block.slotField = InaggHeader.slotField(m, o);
            block.state = DONE;
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
        addLanes(block.lanes, m, o, lanes);
        block.nextExponent = Math.max(block.nextExponent, InaggHeader.nextExponent(m, o));
        increment(ServerCounter.PARTIALS_MERGED);
        if (block.count == job.config.workers())
        {
            finish(job, block);
        }
    }

    /**
     * The table entry of {@code sequence}'s slot copy: open (or opened here) for it, or DONE with its result; null
     * (counted) for a fragment older than the block its entry now holds, or whose lane count differs from its block's.
     * A newer sequence takes the entry over, whatever the older block's state: a newer round of the same slot copy is
     * sent only after every worker had the older round's result, so an open older block has no worker waiting for it
     * (it was completed elsewhere, e.g. by the switch whose COMPLETE copy was lost); it is evicted and counted.
     */
    private Block blockFor(final ServerJob job, final int sequence, final MemorySegment m, final long o,
        final int lanes)
    {
        final Block block = job.entry(InaggHeader.slotField(m, o), lanes);
        if (block.state != FREE && block.sequence == sequence)
        {
            if (block.laneCount != lanes)
            {
                increment(ServerCounter.DROP_MALFORMED);
                return null;
            }
            return block;
        }
        if (block.state != FREE && sequence - block.sequence < 0)
        {
            increment(ServerCounter.LATE);
            return null;
        }
        if (block.state == OPEN)
        {
            increment(ServerCounter.EVICTED);
            job.open--;
        }
        block.open(sequence, lanes, InaggHeader.flags(m, o), InaggHeader.slotField(m, o),
            InaggHeader.blockExponent(m, o));
        job.open++;
        return block;
    }

    private void finish(final ServerJob job, final Block block)
    {
        increment(ServerCounter.COMPLETED);
        block.state = DONE;
        job.open--;
        if (job.config.resultsViaSwitch())
        {
            sendToSwitch(job, block);
            return;
        }
        final int length = writeResult(job, block, staging, 0);
        for (int w = 0; w < job.config.workers(); w++)
        {
            final long offset = transport.claim(job.peers[w], length);
            if (offset == Transport.CLAIM_FAILED)
            {
                increment(ServerCounter.TX_FULL);
                continue;
            }
            final MemorySegment tx = transport.txMemory();
            MemorySegment.copy(staging, 0, tx, offset, length);
            InaggHeader.setWorkerId(tx, offset, w);
            transport.commit();
            increment(ServerCounter.RESULTS_SENT);
        }
    }

    private void sendToSwitch(final ServerJob job, final Block block)
    {
        if (sendResult(job, block, job.config.switchPeer(), 0))
        {
            increment(ServerCounter.RESULTS_SENT);
        }
    }

    /** The block's result to one peer, as worker {@code worker}'s copy. */
    private boolean sendResult(final ServerJob job, final Block block, final int peer, final int worker)
    {
        final long offset = transport.claim(peer, InaggHeader.messageLength(block.laneCount));
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(ServerCounter.TX_FULL);
            return false;
        }
        final MemorySegment tx = transport.txMemory();
        writeResult(job, block, tx, offset);
        InaggHeader.setWorkerId(tx, offset, worker);
        transport.commit();
        return true;
    }

    /** A completed block as the switch's RESULT (worker id 0); returns its length. */
    private static int writeResult(final ServerJob job, final Block block, final MemorySegment m, final long o)
    {
        InaggHeader.write(m, o, MessageType.AGGREGATE, block.flags | InaggHeader.FLAG_RESULT, job.config.jobId(), 0,
            block.slotField, block.slotField >>> 15, block.sequence, block.laneCount, block.blockExponent,
            block.nextExponent, 0);
        final int[] lanes = block.lanes;
        final int n = block.laneCount;
        final long payload = o + InaggHeader.PAYLOAD_OFFSET;
        final int bound = INTS.loopBound(n);
        int k = 0;
        for (; k < bound; k += INTS.length())
        {
            IntVector.fromArray(INTS, lanes, k).intoMemorySegment(m, payload + (long)k * Integer.BYTES,
                ByteOrder.BIG_ENDIAN);
        }
        for (; k < n; k++)
        {
            InaggHeader.setElement(m, o, k, lanes[k]);
        }
        return InaggHeader.messageLength(n);
    }

    /** {@code sum[k] += lane k} of the message's payload (big-endian int32, wrapping), for {@code n} lanes. */
    private static void addLanes(final int[] sum, final MemorySegment m, final long o, final int n)
    {
        final long payload = o + InaggHeader.PAYLOAD_OFFSET;
        final int bound = INTS.loopBound(n);
        int k = 0;
        for (; k < bound; k += INTS.length())
        {
            IntVector.fromMemorySegment(INTS, m, payload + (long)k * Integer.BYTES, ByteOrder.BIG_ENDIAN)
                .add(IntVector.fromArray(INTS, sum, k))
                .intoArray(sum, k);
        }
        for (; k < n; k++)
        {
            sum[k] += InaggHeader.element(m, o, k);
        }
    }

    private void increment(final ServerCounter counter)
    {
        counters[counter.ordinal()].incrementRelease();
    }
}
