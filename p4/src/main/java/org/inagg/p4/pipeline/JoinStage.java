package org.inagg.p4.pipeline;

import java.lang.foreign.MemorySegment;

import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.membership.JoinLog;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.RejectReason;

/**
 * The one JOIN handler of every switch-side node: {@link JobMembership#join} decides, this stage answers (JOIN_ACK:
 * Sequence = W, Slot Index = the job's slots or window, Reserved = lanes, the session; or REJECT with the reason),
 * counts ({@link NodeCounter#JOINS}, {@link NodeCounter#REJECTS}, and a JOIN from another source than the worker's
 * registered one as {@link NodeCounter#DROP_SOURCE_MISMATCH}, one without the worker's credential as
 * {@link NodeCounter#DROP_BAD_CREDENTIAL}, both unanswered) and logs ({@link JoinLog}). A JOIN that starts a new
 * session has the node reset the job's aggregation state before the answer leaves.
 * <p>
 * Over a transport that pins registered sources to a link-layer source (DPDK: {@link Transport#claimedPeer}), the
 * first JOIN accepted from a worker's registered address pins its MAC, and only then are that MAC's messages the
 * worker's ({@link JobMembership#mayPin}); other transports have no claimed peers and skip this.
 */
public final class JoinStage
{
    private static final int NO_PEER = -1;

    /** Told when an accepted JOIN started a new session of a job. */
    public interface SessionListener
    {
        void sessionStarted(NodeJob job);
    }

    private final Transport transport;
    private final NodeCounters<?> counters;
    private final JoinLog log;
    private final SessionListener listener;

    public JoinStage(final Transport transport, final NodeCounters<?> counters, final JoinLog log,
        final SessionListener listener)
    {
        this.transport = transport;
        this.counters = counters;
        this.log = log;
        this.listener = listener;
    }

    /** Decides and answers a JOIN (header checked) of {@code job}, null if the job is not installed. */
    public void join(final NodeJob job, final MemorySegment m, final long o, final int peer)
    {
        final int jobId = InaggHeader.jobId(m, o);
        final int worker = InaggHeader.workerId(m, o);
        final int claimedWorkers = InaggHeader.sequence(m, o);
        final JobMembership membership = job == null ? null : job.membership();
        // Over DPDK a JOIN from a registered source's address through a MAC not pinned to it comes from the source's
        // unpinned peer; it speaks for the source only where the membership allows it (the first JOIN, or one that
        // must show the worker's credential), and pins its MAC once accepted.
        final int claimed = transport.claimedPeer(peer);
        final int source = claimed != NO_PEER && membership != null
            && membership.mayPin(worker, claimed, transport.isPinned(claimed)) ? claimed : peer;
        final int decision;
        final int reason;
        if (membership == null)
        {
            decision = JobMembership.REJECT;
            reason = RejectReason.UNKNOWN_JOB;
        }
        else
        {
            decision = membership.join(worker, claimedWorkers, InaggHeader.session(m, o),
                InaggHeader.joinIncarnation(m, o), InaggHeader.joinCredential(m, o), source, job.serves(worker));
            reason = membership.rejectReason();
        }
        if (decision == JobMembership.SPOOFED)
        {
            // A JOIN from anyone but the registered source is not answered: no reply to a spoofed address.
            counters.increment(NodeCounter.DROP_SOURCE_MISMATCH);
            log.spoofed(jobId, worker, peer);
            return;
        }
        if (decision == JobMembership.BAD_CREDENTIAL)
        {
            // Not the worker's secret: unanswered, and the job (session, state, the worker's incarnation) unchanged.
            counters.increment(NodeCounter.DROP_BAD_CREDENTIAL);
            log.badCredential(jobId, worker, peer);
            return;
        }
        final boolean pinFailed = decision == JobMembership.ACCEPT && source != peer && !transport.pin(peer);
        if (decision == JobMembership.ACCEPT && membership.sessionStarted())
        {
            listener.sessionStarted(job);
            log.sessionStarted(jobId, membership.session(), worker, source);
        }
        if (pinFailed)
        {
            // Accepted, but no longer the message being handed up (a fault injector held it back): answered as if
            // lost, so that the worker's next JOIN pins its MAC before its AGGREGATEs come.
            return;
        }
        // A REJECT goes back to whoever sent the JOIN (over DPDK, an unpinned peer's MAC); an ACK to the source.
        final int replyPeer = decision == JobMembership.ACCEPT ? source : peer;
        final long offset = transport.claim(replyPeer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            counters.increment(NodeCounter.TX_FULL);
            return;
        }
        final MemorySegment tx = transport.txMemory();
        if (decision == JobMembership.ACCEPT)
        {
            InaggHeader.writeJoinAck(tx, offset, jobId, worker, job.joinSlots(), job.workers(), job.joinLanes(),
                membership.session());
            counters.increment(NodeCounter.JOINS);
        }
        else
        {
            InaggHeader.writeReject(tx, offset, jobId, worker, reason, membership == null ? 0 : membership.session(),
                reason == RejectReason.STALE_SESSION ? membership.sessionCause() : 0);
            counters.increment(NodeCounter.REJECTS);
        }
        transport.commit();
        if (decision == JobMembership.ACCEPT)
        {
            log.joined(jobId, worker, job.workers(), replyPeer);
        }
        else
        {
            log.rejected(jobId, worker, claimedWorkers, reason, replyPeer);
        }
    }
}
