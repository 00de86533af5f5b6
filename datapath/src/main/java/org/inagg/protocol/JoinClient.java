package org.inagg.protocol;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.inagg.InaggException;
import org.inagg.JobRejectedException;
import org.inagg.PeerTimeoutException;
import org.inagg.SessionChangedException;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;

/**
 * The worker's membership of its job: JOINs until the switch answers (retried every join retry, given up after the
 * peer timeout), the session and pool it grants, and the switch's liveness afterwards (when it last answered anything;
 * JOINs of the current session as probes while the job stalls). A REJECT naming another session, or a JOIN_ACK granting
 * one, means the job was restarted under this worker, which then fails at once.
 * <p>
 * Not thread safe: it belongs to the worker agent's thread; its failures go to {@link WorkerAgent#fail}.
 */
final class JoinClient
{
    private static final System.Logger LOGGER = System.getLogger(WorkerAgent.class.getName());

    private final WorkerAgent agent;
    private final WorkerSettings settings;
    private final Transport transport;
    private final CompletableFuture<Void> joined = new CompletableFuture<>();
    /** This process's incarnation (random 32 bits, never 0): a JOIN with another one for this worker id is a restart. */
    private final long incarnation = nonZeroRandom();
    /** The job's session this worker joined (JOIN_ACK); stamped on every AGGREGATE. */
    private int session = InaggHeader.ANY_SESSION;
    /** When the switch last answered anything (a result or a JOIN_ACK of a liveness probe). */
    private long lastSwitchAnswerNs;
    private long nextProbeNs;
    /** When the first liveness probe of the stall went out (or was tried: a full transport does not hold a timeout back). */
    private long firstProbeNs;
    /** The start of the stall the last probe was for ({@code lastProgressNs} then); valid once {@link #probed}. */
    private long probedStallNs;
    private boolean probed;
    private long nextJoinNs;
    private long joinDeadlineNs = Long.MIN_VALUE;
    private int slots;
    private int lanes;

    JoinClient(final WorkerAgent agent, final WorkerSettings settings, final Transport transport)
    {
        this.agent = agent;
        this.settings = settings;
        this.transport = transport;
    }

    CompletableFuture<Void> joined()
    {
        return joined;
    }

    boolean isJoined()
    {
        return joined.isDone();
    }

    int session()
    {
        return session;
    }

    /** Slots in the job's pool, known once joined. */
    int slots()
    {
        return slots;
    }

    /** Lanes per packet, known once joined. */
    int lanes()
    {
        return lanes;
    }

    long lastSwitchAnswerNs()
    {
        return lastSwitchAnswerNs;
    }

    /** The switch answered something at {@code nowNs}. */
    void onSwitchAnswer(final long nowNs)
    {
        lastSwitchAnswerNs = nowNs;
    }

    void start(final long nowNs)
    {
        nextJoinNs = nowNs;
    }

    /** Until joined: sends a JOIN when one is due, fails the worker once the peer timeout passed without an answer. */
    int join(final long nowNs)
    {
        if (joinDeadlineNs == Long.MIN_VALUE)
        {
            joinDeadlineNs = nowNs + settings.peerTimeoutNs();
        }
        if (nowNs - joinDeadlineNs > 0)
        {
            agent.fail(new PeerTimeoutException("job " + settings.jobId() + " worker " + settings.workerId()
                + ": the switch at " + transport.describePeer(settings.switchPeer()) + " did not answer the join within "
                + TimeUnit.NANOSECONDS.toMillis(settings.peerTimeoutNs()) + " ms; is the switch running, the job "
                + "configured on it, and this worker's source the one registered for it (a switch drops a JOIN from "
                + "any other source unanswered)?"));
            return 1;
        }
        if (nowNs - nextJoinNs < 0)
        {
            return 0;
        }
        nextJoinNs = nowNs + settings.joinRetryNs();
        return sendJoin(InaggHeader.ANY_SESSION) ? 1 : 0;
    }

    /**
     * The job has made no progress since {@code lastProgressNs}: past a quarter of the peer timeout, asks the switch
     * whether it is there (a JOIN of this session is answered and changes nothing), so that a timeout can say whether
     * the switch or a peer worker is gone. Past the peer timeout a stall not probed yet (this thread did not run
     * between a quarter of it and all of it: a cold JVM's first operation, a descheduled or paused process) is probed
     * at once.
     */
    void probe(final long nowNs, final long lastProgressNs)
    {
        final long stalledNs = nowNs - lastProgressNs;
        final boolean probedThisStall = probedStall(lastProgressNs);
        // The first probe of a stall goes at once (an earlier stall's interval, or a clock that reads negative, does
        // not hold it back), the next ones a probe interval apart.
        if (stalledNs > settings.peerTimeoutNs() / 4 && (!probedThisStall || nowNs - nextProbeNs >= 0)
            && (stalledNs <= settings.peerTimeoutNs() || !probedThisStall))
        {
            nextProbeNs = nowNs + probeIntervalNs();
            if (!probedThisStall)
            {
                firstProbeNs = nowNs;
            }
            probedStallNs = lastProgressNs;
            probed = true;
            sendJoin(session);
        }
    }

    /**
     * Whether a stall past the peer timeout may fail the worker: the first probe of this stall went out a probe interval
     * ago, so the failure can say whether the switch still answers. Without it a worker whose thread did not run for the peer
     * timeout blamed the switch, never having asked it (EndToEndAllReduceTest under load, the first operation).
     */
    boolean probeAnswerDue(final long nowNs, final long lastProgressNs)
    {
        return probedStall(lastProgressNs) && nowNs - firstProbeNs >= probeIntervalNs();
    }

    private boolean probedStall(final long lastProgressNs)
    {
        return probed && probedStallNs == lastProgressNs;
    }

    private long probeIntervalNs()
    {
        return Math.max(settings.joinRetryNs(), settings.peerTimeoutNs() / 8);
    }

    /** A JOIN_ACK or REJECT from {@code peer}. */
    void onAnswer(final MemorySegment m, final long o, final int type, final int peer, final long nowNs)
    {
        // Only the node the JOIN went to answers it: an answer from any other sender (a stray or a spoof) would join
        // this worker with another job's window and lanes, or fail it, at a stranger's word.
        if (peer != settings.switchPeer() || InaggHeader.jobId(m, o) != settings.jobId()
            || InaggHeader.workerId(m, o) != settings.workerId())
        {
            return;
        }
        if (joined.isDone())
        {
            if (!agent.failed() && !joined.isCompletedExceptionally())
            {
                onAnswerWhileJoined(m, o, type, nowNs);
            }
            return;
        }
        if (type == MessageType.REJECT)
        {
            agent.fail(new JobRejectedException("the switch rejected job " + settings.jobId() + " worker "
                + settings.workerId() + ": " + RejectReason.describe(InaggHeader.status(m, o))));
            return;
        }
        final int workers = InaggHeader.sequence(m, o);
        final int poolSlots = InaggHeader.slotIndex(m, o);
        final int poolLanes = InaggHeader.joinLanes(m, o);
        if (workers != settings.workers())
        {
            agent.fail(new JobRejectedException("job " + settings.jobId() + " has " + workers + " workers on the switch"
                + " but this worker was configured with " + settings.workers()));
            return;
        }
        if (poolSlots < 1 || poolLanes < 1 || InaggHeader.messageLength(poolLanes) > transport.maxMessageLength())
        {
            agent.fail(new JobRejectedException("job " + settings.jobId() + ": the switch asks for " + poolSlots
                + " slots of " + poolLanes + " lanes, which this transport (max message "
                + transport.maxMessageLength() + " bytes) cannot carry: give the worker or agent --max-lanes "
                + poolLanes));
            return;
        }
        slots = poolSlots;
        lanes = poolLanes;
        session = InaggHeader.joinAckSession(m, o);
        lastSwitchAnswerNs = nowNs;
        agent.onJoined(poolSlots);
        LOGGER.log(System.Logger.Level.INFO, () -> "job " + settings.jobId() + " worker " + settings.workerId()
            + ": joined the switch at " + transport.describePeer(settings.switchPeer()) + " (" + workers + " workers, "
            + poolSlots + " slots of " + poolLanes + " lanes, session " + session + ")");
        joined.complete(null);
    }

    /**
     * No result for the peer timeout: the failure says whether the switch still answers (a peer worker is gone) or
     * not (the switch is).
     */
    PeerTimeoutException peerTimeout(
        final long nowNs, final long lastProgressNs, final int oldestPacket, final int totalPackets,
        final long retransmissions)
    {
        final boolean switchAnswers = lastSwitchAnswerNs - lastProgressNs > 0;
        final String switchAt = "the switch at " + transport.describePeer(settings.switchPeer());
        return new PeerTimeoutException("job " + settings.jobId() + " worker " + settings.workerId()
            + ": no aggregation result for " + TimeUnit.NANOSECONDS.toMillis(settings.peerTimeoutNs())
            + " ms (packet " + oldestPacket + " of " + totalPackets + " outstanding after " + retransmissions
            + " retransmissions, session " + session + "); " + (switchAnswers
            ? switchAt + " answers (last " + TimeUnit.NANOSECONDS.toMillis(nowNs - lastSwitchAnswerNs)
            + " ms ago) but another worker of the job stopped contributing: a peer worker is gone (killed,"
            + " stopped or cut off)"
            : switchAt + " did not answer anything, not even liveness JOINs, for "
            + TimeUnit.NANOSECONDS.toMillis(nowNs - lastSwitchAnswerNs) + " ms: the switch is gone or"
            + " unreachable"), switchAnswers);
    }

    /** The worker failed: whoever waits for the join learns why. */
    void fail(final InaggException cause)
    {
        joined.completeExceptionally(cause);
    }

    /**
     * An answer to a liveness probe, or a REJECT of a packet: the switch is alive; another session ends the run, and so
     * does a collective the node does not carry.
     */
    private void onAnswerWhileJoined(final MemorySegment m, final long o, final int type, final long nowNs)
    {
        if (type == MessageType.REJECT && InaggHeader.status(m, o) == RejectReason.UNSUPPORTED_COLLECTIVE
            && InaggHeader.session(m, o) == session)
        {
            agent.fail(new JobRejectedException("job " + settings.jobId() + " worker " + settings.workerId() + ": "
                + RejectReason.describeCollective(InaggHeader.flags(m, o)) + " is not supported by the node at "
                + transport.describePeer(settings.switchPeer()) + agent.progress() + " (docs/wire-format.md,"
                + " \"Where they run\": send it through a node that carries it)"));
            return;
        }
        final boolean staleReject = type == MessageType.REJECT
            && InaggHeader.status(m, o) == RejectReason.STALE_SESSION;
        final int current = type == MessageType.JOIN_ACK ? InaggHeader.joinAckSession(m, o) : InaggHeader.session(m, o);
        if (type == MessageType.JOIN_ACK && current == session)
        {
            lastSwitchAnswerNs = nowNs;
            return;
        }
        if (!staleReject && type != MessageType.JOIN_ACK)
        {
            return;
        }
        final int cause = type == MessageType.REJECT ? InaggHeader.sequence(m, o)
            : InaggHeader.SESSION_CAUSE_CONTROL_PLANE;
        final String by = cause == InaggHeader.SESSION_CAUSE_CONTROL_PLANE || cause < 0
            ? "the job was started again (a new session from the control plane, or a rejoin)"
            : "worker " + cause + " of job " + settings.jobId() + " rejoined as a new process";
        agent.fail(new SessionChangedException("job " + settings.jobId() + " worker " + settings.workerId() + ": " + by
            + " and the job moved to session " + current + " while this worker was in session " + session
            + agent.progress() + "; this run is aborted (restart every worker of the job to run it again)", session,
            current, cause == InaggHeader.SESSION_CAUSE_CONTROL_PLANE ? -1 : cause));
    }

    /** A JOIN with this process's incarnation and credential, asking for {@code askedSession} (a probe once joined). */
    private boolean sendJoin(final int askedSession)
    {
        final long credential = settings.joinCredential();
        final long offset = transport.claim(settings.switchPeer(), InaggHeader.joinLength(credential));
        if (offset == Transport.CLAIM_FAILED)
        {
            return false;
        }
        InaggHeader.writeJoin(transport.txMemory(), offset, settings.jobId(), settings.workerId(), settings.workers(),
            askedSession, incarnation, credential);
        transport.commit();
        return true;
    }

    private static long nonZeroRandom()
    {
        long value;
        do
        {
            value = ThreadLocalRandom.current().nextLong() & 0xFFFF_FFFFL;
        }
        while (value == 0);
        return value;
    }
}
