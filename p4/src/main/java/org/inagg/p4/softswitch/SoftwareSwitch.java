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
 * Jobs are installed through {@link #addJob}, from any thread; the agent applies them between messages. Each job owns
 * its slots: jobs placed in the shared register pool ({@link SwitchJobConfig#slotBase()}) must not overlap, as the P4
 * programs index one register pool with {@code slotBase + slot}. A job with registered worker sources
 * ({@link SwitchJobConfig#registeredSources()}) accepts a worker's JOIN and AGGREGATE only from that worker's peer, the
 * software counterpart of the P4 programs' check of IPv4 source and UDP source port.
 */
public final class SoftwareSwitch implements Agent, MessageHandler
{
    private static final int NO_PEER = -1;
    private static final int MAX_RECEIVE_BURSTS_PER_CYCLE = 64;

    private final Transport transport;
    private final int receiveBurst;
    private final SwitchJob[] jobs = new SwitchJob[InaggHeader.MAX_JOB_ID + 1];
    private final ManyToOneConcurrentArrayQueue<SwitchJobConfig> pendingJobs = new ManyToOneConcurrentArrayQueue<>(1024);
    private final AtomicCounter[] counters = new AtomicCounter[SwitchCounter.values().length];
    private final MemorySegment staging;
    /** Jobs as last requested through {@link #addJob}, to refuse overlapping slot ranges; guarded by itself. */
    private final Map<Integer, SwitchJobConfig> requestedJobs = new HashMap<>();

    /** One row of the job table with the job's slot pool. */
    private static final class SwitchJob
    {
        final SwitchJobConfig config;
        final SlotPool pool;
        final int[] workerPeer;

        SwitchJob(final SwitchJobConfig config)
        {
            this.config = config;
            this.pool = new SlotPool(config.slots(), config.workers(), config.lanesPerPacket());
            this.workerPeer = config.registeredSources() ? config.workerPeers() : new int[config.workers()];
            if (!config.registeredSources())
            {
                Arrays.fill(workerPeer, NO_PEER);
            }
        }
    }

    public SoftwareSwitch(final Transport transport, final CounterRegistry registry, final int receiveBurst)
    {
        this.transport = transport;
        this.receiveBurst = receiveBurst;
        this.staging = Arena.ofAuto().allocate(transport.maxMessageLength(), 64);
        for (final SwitchCounter counter : SwitchCounter.values())
        {
            counters[counter.ordinal()] = registry.newCounter("switch: " + counter.label(), counter.typeId());
        }
    }

    /**
     * Installs (or replaces, resetting its slots) a job; applied by the agent before the next message.
     *
     * @throws IllegalArgumentException if the job's messages do not fit the transport, or its slot range in the shared
     *                                  pool overlaps another job's.
     */
    public void addJob(final SwitchJobConfig config)
    {
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
            if (!pendingJobs.offer(config))
            {
                throw new IllegalStateException("too many job changes pending; is the switch agent running?");
            }
            requestedJobs.put(config.jobId(), config);
        }
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
        SwitchJobConfig config;
        while ((config = pendingJobs.poll()) != null)
        {
            jobs[config.jobId()] = new SwitchJob(config);
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
            aggregate(m, o, peer);
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

    private void aggregate(final MemorySegment m, final long o, final int peer)
    {
        // Job table
        final SwitchJob job = jobs[InaggHeader.jobId(m, o)];
        if (job == null)
        {
            increment(SwitchCounter.DROP_UNKNOWN_JOB);
            return;
        }
        // Worker check
        final int worker = InaggHeader.workerId(m, o);
        if (worker >= job.config.workers())
        {
            increment(SwitchCounter.DROP_UNKNOWN_WORKER);
            return;
        }
        if (job.workerPeer[worker] != peer)
        {
            increment(SwitchCounter.DROP_SOURCE_MISMATCH);
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
        if (laneCount > job.config.lanesPerPacket())
        {
            increment(SwitchCounter.DROP_BAD_SIZE);
            return;
        }
        final SlotPool pool = job.pool;
        final int copyIndex = 2 * slot + InaggHeader.shadowCopy(m, o);
        // Register actions
        final int round = pool.roundAction(copyIndex, InaggHeader.sequence(m, o), laneCount);
        switch (round)
        {
            case SlotPool.ROUND_STALE -> increment(SwitchCounter.DROP_STALE);
            case SlotPool.ROUND_VIOLATION -> increment(SwitchCounter.DROP_VIOLATION);
            case SlotPool.ROUND_BAD_SIZE -> increment(SwitchCounter.DROP_BAD_SIZE);
            case SlotPool.ROUND_COMPLETE ->
            {
                if (sendResult(job, copyIndex, m, o, worker))
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
                pool.lanesAction(copyIndex, first, m, o + InaggHeader.PAYLOAD_OFFSET, laneCount);
                pool.exponentAction(copyIndex, first, InaggHeader.nextExponent(m, o));
                increment(SwitchCounter.CONTRIBUTIONS);
                if (count == job.config.workers())
                {
                    multicastResult(job, copyIndex, m, o);
                }
            }
        }
    }

    /**
     * Sends the completed sum to every worker: built once in the switch's own staging memory, then copied per
     * destination with its worker id (as egress replication does). Never copy from an already committed message: its
     * receiver may consume it, and a ring reclaim and zero it, while the later copies are still being made.
     */
    private void multicastResult(final SwitchJob job, final int copyIndex, final MemorySegment m, final long o)
    {
        final int length = InaggHeader.messageLength(job.pool.lanes(copyIndex));
        writeResult(job, copyIndex, m, o, 0, staging, 0);
        for (int worker = 0; worker < job.config.workers(); worker++)
        {
            final long offset = transport.claim(job.workerPeer[worker], length);
            if (offset == Transport.CLAIM_FAILED)
            {
                increment(SwitchCounter.TX_FULL);
                continue;
            }
            final MemorySegment tx = transport.txMemory();
            MemorySegment.copy(staging, 0, tx, offset, length);
            InaggHeader.setWorkerId(tx, offset, worker);
            transport.commit();
            increment(SwitchCounter.RESULTS_SENT);
        }
    }

    private boolean sendResult(
        final SwitchJob job, final int copyIndex, final MemorySegment m, final long o, final int worker)
    {
        final long offset = transport.claim(job.workerPeer[worker],
            InaggHeader.messageLength(job.pool.lanes(copyIndex)));
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(SwitchCounter.TX_FULL);
            return false;
        }
        writeResult(job, copyIndex, m, o, worker, transport.txMemory(), offset);
        transport.commit();
        return true;
    }

    /** The result reuses the request's header (job, slot, copy, sequence, block exponent) with the sums. */
    private static void writeResult(
        final SwitchJob job, final int copyIndex, final MemorySegment m, final long o, final int worker,
        final MemorySegment tx, final long offset)
    {
        MemorySegment.copy(m, o, tx, offset, InaggHeader.LENGTH);
        InaggHeader.setFlags(tx, offset, (InaggHeader.flags(m, o) & InaggHeader.FLAG_INT32) | InaggHeader.FLAG_RESULT);
        InaggHeader.setWorkerId(tx, offset, worker);
        InaggHeader.setElementCount(tx, offset, job.pool.lanes(copyIndex));
        InaggHeader.setNextExponent(tx, offset, job.pool.exponent(copyIndex));
        job.pool.readLanes(copyIndex, tx, offset + InaggHeader.PAYLOAD_OFFSET);
    }

    private void join(final MemorySegment m, final long o, final int peer)
    {
        final int jobId = InaggHeader.jobId(m, o);
        final int worker = InaggHeader.workerId(m, o);
        final SwitchJob job = jobs[jobId];
        final int reason;
        if (job == null)
        {
            reason = RejectReason.UNKNOWN_JOB;
        }
        else if (worker >= job.config.workers())
        {
            reason = RejectReason.WORKER_ID_OUT_OF_RANGE;
        }
        else if (job.config.registeredSources() && job.workerPeer[worker] != peer)
        {
            // A JOIN from anyone but the registered source is not answered: no reply to a spoofed address.
            increment(SwitchCounter.DROP_SOURCE_MISMATCH);
            return;
        }
        else if (InaggHeader.sequence(m, o) != job.config.workers())
        {
            reason = RejectReason.WORKER_COUNT_MISMATCH;
        }
        else
        {
            reason = 0;
            job.workerPeer[worker] = peer;
        }
        final long offset = transport.claim(peer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            increment(SwitchCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        if (reason == 0)
        {
            InaggHeader.write(tx, offset, MessageType.JOIN_ACK, InaggHeader.FLAG_RESULT, jobId, worker,
                job.config.slots(), 0, job.config.workers(), 0, 0, InaggHeader.NO_EXPONENT, 0);
            InaggHeader.setJoinLanes(tx, offset, job.config.lanesPerPacket());
            increment(SwitchCounter.JOINS);
        }
        else
        {
            InaggHeader.write(tx, offset, MessageType.REJECT, InaggHeader.FLAG_RESULT, jobId, worker, 0, 0, 0, 0, 0,
                InaggHeader.NO_EXPONENT, 0);
            InaggHeader.setStatus(tx, offset, reason);
            increment(SwitchCounter.REJECTS);
        }
        transport.commit();
    }

    private void increment(final SwitchCounter counter)
    {
        counters[counter.ordinal()].incrementRelease();
    }
}
