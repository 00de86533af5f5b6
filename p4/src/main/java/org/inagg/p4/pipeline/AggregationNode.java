package org.inagg.p4.pipeline;

import java.lang.foreign.MemorySegment;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.membership.JoinLog;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;
import org.inagg.wire.WireCheck;

/**
 * The one pipeline of every switch-side node (software switch, ESA switch, parameter server), an Agrona agent over
 * any {@link Transport}:
 * <pre>
 *   drain ─ parse ─┬─ JOIN ─────────────────────────── {@link JoinStage} (membership, JOIN_ACK / REJECT)
 *                  └─ strategy parse ─ job table ─ {@link AggregationStrategy#aggregate} ─ admit ─ aggregate ─ send
 * </pre>
 * Each duty cycle applies the queued control changes (jobs installed or removed from any thread, strategy-specific
 * changes), then drains the receive queue in bounded bursts. What a node aggregates, and how, is its
 * {@link AggregationStrategy}; the checks every node makes of a worker's packet (worker id, source, session) are
 * {@link #admit}. Counters are the node family's, the shared outcomes under their {@link NodeCounter} names.
 *
 * @param <J> the strategy's job.
 */
public final class AggregationNode<J extends NodeJob> implements Agent, MessageHandler
{
    private static final int NO_PEER = -1;
    private static final int MAX_RECEIVE_BURSTS_PER_CYCLE = 64;

    private final String roleName;
    private final Transport transport;
    private final int receiveBurst;
    private final NodeCounters<?> counters;
    private final JoinLog joinLog;
    private final JoinStage joinStage;
    private final NodeJob[] jobs = new NodeJob[InaggHeader.MAX_JOB_ID + 1];
    private final ManyToOneConcurrentArrayQueue<Object> control = new ManyToOneConcurrentArrayQueue<>(4096);
    private AggregationStrategy<J> strategy;

    private record Removal(int jobId)
    {
    }

    /**
     * @param roleName     the agent's role name.
     * @param logSource    the class whose logger the lifecycle lines go to.
     * @param node         how the lines name the node.
     * @param receiveBurst messages taken from the transport per poll.
     */
    public AggregationNode(final String roleName, final Class<?> logSource, final String node,
        final Transport transport, final NodeCounters<?> counters, final int receiveBurst)
    {
        this.roleName = roleName;
        this.transport = transport;
        this.receiveBurst = receiveBurst;
        this.counters = counters;
        this.joinLog = new JoinLog(logSource, node, transport);
        this.joinStage = new JoinStage(transport, counters, joinLog, this::onSessionStarted);
    }

    /** Sets the strategy (once, before the agent runs): it usually needs the node to send, so it comes second. */
    public void strategy(final AggregationStrategy<J> strategy)
    {
        if (this.strategy != null)
        {
            throw new IllegalStateException("the node's strategy is already set");
        }
        this.strategy = strategy;
    }

    public Transport transport()
    {
        return transport;
    }

    public NodeCounters<?> counters()
    {
        return counters;
    }

    /** The installed job {@code jobId}, or null; agent thread (or quiescent). */
    @SuppressWarnings("unchecked")
    public J job(final int jobId)
    {
        return (J)jobs[jobId];
    }

    /** Installs (or replaces) {@code job} before the next message. Any thread. */
    public void install(final J job)
    {
        offer(job);
    }

    /** Removes job {@code jobId} before the next message, if installed. Any thread. */
    public void remove(final int jobId)
    {
        offer(new Removal(jobId));
    }

    /** Runs {@code change} on the agent thread before the next message. Any thread. */
    public void control(final Runnable change)
    {
        offer(change);
    }

    private void offer(final Object change)
    {
        if (!control.offer(change))
        {
            throw new IllegalStateException("too many job changes pending; is the " + roleName + " agent running?");
        }
    }

    @Override
    public String roleName()
    {
        return roleName;
    }

    @Override
    public int doWork()
    {
        int work = applyControl();
        // Drain the receive queue (bounded): a node that reads less than its workers send overflows socket buffers.
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

    /** Applies queued control changes; the agent does this each cycle, a test or harness may call it directly. */
    @SuppressWarnings("unchecked")
    public int applyControl()
    {
        int work = 0;
        Object change;
        while ((change = control.poll()) != null)
        {
            work++;
            if (change instanceof Removal removal)
            {
                final J previous = (J)jobs[removal.jobId()];
                jobs[removal.jobId()] = null;
                if (previous != null)
                {
                    strategy.removed(previous);
                }
                joinLog.jobRemoved(removal.jobId());
            }
            else if (change instanceof Runnable runnable)
            {
                runnable.run();
            }
            else
            {
                final J job = (J)change;
                final J previous = (J)jobs[job.jobId()];
                jobs[job.jobId()] = job;
                strategy.installed(job, previous);
                joinLog.jobInstalled(job.jobId(), job.describe());
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
    @SuppressWarnings("unchecked")
    public void onMessage(final MemorySegment m, final long o, final int length, final int peer)
    {
        counters.increment(NodeCounter.RECEIVED);
        if (InaggHeader.check(m, o, length) != WireCheck.OK || peer == NO_PEER)
        {
            counters.increment(NodeCounter.DROP_MALFORMED);
            return;
        }
        final int type = InaggHeader.type(m, o);
        if (type == MessageType.JOIN)
        {
            joinStage.join(jobs[InaggHeader.jobId(m, o)], m, o, peer);
            return;
        }
        final NodeCounter drop = strategy.parse(m, o, type);
        if (drop != null)
        {
            counters.increment(drop);
            return;
        }
        final NodeJob job = jobs[InaggHeader.jobId(m, o)];
        if (job == null)
        {
            counters.increment(NodeCounter.DROP_UNKNOWN_JOB);
            return;
        }
        strategy.aggregate((J)job, m, o, length, peer);
    }

    /**
     * The checks of a worker's packet every node makes, in this order, each counted: the worker id is the job's and
     * served here ({@link NodeCounter#DROP_UNKNOWN_WORKER}), the source is the worker's
     * ({@link NodeCounter#DROP_SOURCE_MISMATCH}), the session is the job's current one
     * ({@link NodeCounter#DROP_STALE_SESSION}, answered with REJECT naming the current session and the worker whose
     * rejoin started it: a packet of an earlier or later run never touches the job's state).
     *
     * @return whether the packet goes on to the strategy's aggregation.
     */
    public boolean admit(final NodeJob job, final MemorySegment m, final long o, final int worker, final int peer)
    {
        if (!job.serves(worker))
        {
            counters.increment(NodeCounter.DROP_UNKNOWN_WORKER);
            return false;
        }
        final JobMembership membership = job.membership();
        if (!membership.isSource(worker, peer))
        {
            counters.increment(NodeCounter.DROP_SOURCE_MISMATCH);
            return false;
        }
        if (!membership.isCurrent(InaggHeader.session(m, o)))
        {
            counters.increment(NodeCounter.DROP_STALE_SESSION);
            rejectStale(job, m, o, worker, peer);
            return false;
        }
        return true;
    }

    /**
     * The checks of a RESULT a node takes from its job's server (the ATP switch, a two-level switch that relays its
     * workers' results), each counted: from {@code serverPeer} ({@link NodeCounter#DROP_SOURCE_MISMATCH}), of the job's
     * current session ({@link NodeCounter#DROP_STALE_SESSION}; unanswered: a server is no worker to REJECT).
     *
     * @return whether the result goes on to the strategy.
     */
    public boolean admitResult(final NodeJob job, final MemorySegment m, final long o, final int peer,
        final int serverPeer)
    {
        if (peer != serverPeer)
        {
            counters.increment(NodeCounter.DROP_SOURCE_MISMATCH);
            return false;
        }
        if (!job.membership().isCurrent(InaggHeader.session(m, o)))
        {
            counters.increment(NodeCounter.DROP_STALE_SESSION);
            return false;
        }
        return true;
    }

    /** The {@code lanesTo} of {@link #multicast} for a RESULT: its Owner if a REDUCE_SCATTER, else every worker. */
    public static int lanesTo(final MemorySegment result, final long o)
    {
        return InaggHeader.collective(result, o) == InaggHeader.COLLECTIVE_REDUCE_SCATTER
            ? InaggHeader.owner(result, o) : ALL_WORKERS;
    }

    /** {@link #multicast}: every worker's copy carries the lanes. */
    public static final int ALL_WORKERS = -1;

    /**
     * Sends a result to every worker of the job, as the P4 programs' egress replicates it: the {@code length} bytes at
     * {@code source} copied per worker with its worker id; a copy to a worker other than {@code lanesTo} (unless
     * {@link #ALL_WORKERS}) carries the header alone (a REDUCE_SCATTER result to a worker that is not the Owner).
     * {@code source} must be the node's own memory or the message being handled, never a committed message: its
     * receiver may consume it, and a ring reclaim and zero it, while the later copies are made. Each copy is counted
     * ({@link NodeCounter#RESULTS_SENT}, or {@link NodeCounter#TX_FULL} when the transport is full).
     */
    public void multicast(final NodeJob job, final MemorySegment source, final long offset, final int length,
        final int lanesTo)
    {
        multicast(job, source, offset, length, lanesTo, null);
    }

    /**
     * {@link #multicast(NodeJob, MemorySegment, long, int, int)} to the workers whose bit is clear in {@code skip}
     * (bit {@code w % 32} of word {@code w / 32}, as a PARTIAL's bitmap; null: every worker): a first-level switch's
     * local workers, or a server's workers whose result goes down through their switch.
     */
    public void multicast(final NodeJob job, final MemorySegment source, final long offset, final int length,
        final int lanesTo, final int[] skip)
    {
        final JobMembership membership = job.membership();
        for (int worker = 0; worker < job.workers(); worker++)
        {
            if (skip != null && (skip[worker >>> 5] & (1 << (worker & 31))) != 0)
            {
                continue;
            }
            final boolean withLanes = lanesTo == ALL_WORKERS || worker == lanesTo;
            final int copyLength = withLanes ? length : InaggHeader.LENGTH;
            final long at = transport.claim(membership.peer(worker), copyLength);
            if (at == Transport.CLAIM_FAILED)
            {
                counters.increment(NodeCounter.TX_FULL);
                continue;
            }
            final MemorySegment tx = transport.txMemory();
            MemorySegment.copy(source, offset, tx, at, copyLength);
            InaggHeader.setWorkerId(tx, at, worker);
            if (!withLanes)
            {
                InaggHeader.setElementCount(tx, at, 0);
            }
            transport.commit();
            counters.increment(NodeCounter.RESULTS_SENT);
        }
    }

    /** Answers a packet of another session than the job's: REJECT (STALE_SESSION) with the current one. */
    public void rejectStale(final NodeJob job, final MemorySegment m, final long o, final int worker, final int peer)
    {
        final long offset = transport.claim(peer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            counters.increment(NodeCounter.TX_FULL);
            return;
        }
        InaggHeader.writeReject(transport.txMemory(), offset, InaggHeader.jobId(m, o), worker,
            RejectReason.STALE_SESSION, job.membership().session(), job.membership().sessionCause());
        transport.commit();
    }

    /**
     * Starts session {@code session} of {@code job} by another node's word (a switch in front of a parameter server
     * whose workers rejoined it): the job's state is reset as for a rejoin here.
     */
    public void adoptSession(final J job, final int session)
    {
        job.membership().startSession(session);
        strategy.sessionStarted(job);
        joinLog.sessionAdopted(job.jobId(), session);
    }

    @SuppressWarnings("unchecked")
    private void onSessionStarted(final NodeJob job)
    {
        strategy.sessionStarted((J)job);
    }
}
