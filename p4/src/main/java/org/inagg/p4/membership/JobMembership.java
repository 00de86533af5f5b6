package org.inagg.p4.membership;

import java.util.Arrays;

import org.inagg.wire.InaggHeader;
import org.inagg.wire.RejectReason;

/**
 * The membership of one job on one node: which source speaks for each worker id, the job's current <b>session</b>,
 * and which worker incarnations have joined it.
 * <p>
 * <b>Sessions.</b> Every run of a job is a session, a 16-bit number every AGGREGATE carries (Session field of
 * {@link InaggHeader}); a node aggregates only packets of the current session and counts the rest as stale. A new
 * session starts the job afresh (the node resets the job's aggregation state) and comes either from the control plane
 * ({@link #startSession}) or from a JOIN: when a worker id that has joined the current session joins again with
 * another <i>incarnation</i> (the random 32-bit number a worker process draws once, carried in its JOIN), that
 * worker was restarted, so the run it belonged to is over: the session advances, the other workers of the old
 * session are refused (their packets answered with {@link RejectReason#STALE_SESSION}, naming the worker that
 * rejoined), and whoever joins now joins the new run. A JOIN repeated by the same incarnation (a lost JOIN_ACK) is
 * answered again and changes nothing;
 * a process of an earlier session never joins a later one (its JOINs are refused as stale, whatever session they ask
 * for), so a survivor of a restarted run cannot slip into the new one half-way through its own iteration.
 * <p>
 * <b>Admission.</b> With registered sources (the control plane names each worker's address) a JOIN or AGGREGATE from
 * any other source is dropped unanswered: nobody else can join, restart or feed the job. Without them (open mode, for
 * labs) a worker's source is the one it last joined from.
 * <p>
 * <b>JOIN credentials.</b> A job installed by the controller holds a 64-bit secret per worker id, handed to that
 * rank only (its registration answer); a JOIN of that worker id must show exactly it
 * ({@link InaggHeader#joinCredential}) or it is dropped unanswered ({@link #BAD_CREDENTIAL}) before it can touch the
 * session, the worker's incarnation or its source: with registered sources a forged JOIN from a worker's own address
 * (a spoofed source) no longer restarts the job. A worker whose credential is {@link InaggHeader#NO_CREDENTIAL} (a job
 * the operator installed without one) needs none.
 * <p>
 * <b>Link-layer sources.</b> Over DPDK a registered source is an IPv4 address and UDP port whose MAC and link the
 * worker's first accepted JOIN pins; frames from that address with another MAC are not the source's, and only a JOIN
 * {@link #mayPin} allows may move the pin. Over UDP the address is the whole source.
 * <p>
 * Used on the node's agent thread only (not thread-safe); JOINs allocate nothing.
 */
public final class JobMembership
{
    /** {@link #join} outcome: answer JOIN_ACK with {@link #session()}. */
    public static final int ACCEPT = 0;
    /** {@link #join} outcome: answer REJECT with {@link #rejectReason()}. */
    public static final int REJECT = 1;
    /** {@link #join} outcome: not the registered source; drop unanswered. */
    public static final int SPOOFED = 2;
    /** {@link #join} outcome: the worker's credential is required and the JOIN does not show it; drop unanswered. */
    public static final int BAD_CREDENTIAL = 3;

    private static final int NO_PEER = -1;

    private final int jobId;
    private final int workers;
    private final boolean registered;
    private final boolean newSessionOnRejoin;
    private final int[] peers;
    private final long[] credentials;
    private final long[] incarnations;
    private final boolean[] inSession;
    private int session;
    private int sessionCause = InaggHeader.SESSION_CAUSE_CONTROL_PLANE;
    private int rejectReason;
    private boolean sessionStarted;

    /**
     * @param jobId   the job.
     * @param workers the job's W.
     * @param peers   registered transport peer of each worker id (admission), or null for open mode.
     * @param session the job's first session (0..65535), as the control plane issued it.
     */
    public JobMembership(final int jobId, final int workers, final int[] peers, final int session)
    {
        this(jobId, workers, peers, session, true);
    }

    /**
     * @param newSessionOnRejoin whether a rejoin with another incarnation starts a new session (every node of the
     *                           pipeline); without it a rejoin is accepted in the current session, as before sessions.
     */
    public JobMembership(final int jobId, final int workers, final int[] peers, final int session,
        final boolean newSessionOnRejoin)
    {
        this(jobId, workers, peers, null, session, newSessionOnRejoin);
    }

    /**
     * @param credentials the JOIN credential of each worker id ({@link InaggHeader#NO_CREDENTIAL}: none required), or
     *                    null when the job requires none.
     */
    public JobMembership(final int jobId, final int workers, final int[] peers, final long[] credentials,
        final int session, final boolean newSessionOnRejoin)
    {
        if (peers != null && peers.length != workers)
        {
            throw new IllegalArgumentException("job " + jobId + ": " + peers.length + " registered sources for "
                + workers + " workers");
        }
        if (credentials != null && credentials.length != workers)
        {
            throw new IllegalArgumentException("job " + jobId + ": " + credentials.length + " JOIN credentials for "
                + workers + " workers");
        }
        this.credentials = credentials == null ? new long[workers] : credentials.clone();
        this.jobId = jobId;
        this.workers = workers;
        this.newSessionOnRejoin = newSessionOnRejoin;
        this.registered = peers != null;
        this.peers = registered ? peers.clone() : new int[workers];
        if (!registered)
        {
            Arrays.fill(this.peers, NO_PEER);
        }
        this.incarnations = new long[workers];
        this.inSession = new boolean[workers];
        this.session = requireSession(jobId, session);
    }

    private static int requireSession(final int jobId, final int session)
    {
        if (session < 0 || session > 0xFFFF)
        {
            throw new IllegalArgumentException("job " + jobId + ": session must be in 0..65535, got " + session);
        }
        return session;
    }

    public int jobId()
    {
        return jobId;
    }

    public int workers()
    {
        return workers;
    }

    /** Whether any worker id of the job requires a JOIN credential. */
    public boolean credentialsRequired()
    {
        for (final long credential : credentials)
        {
            if (credential != InaggHeader.NO_CREDENTIAL)
            {
                return true;
            }
        }
        return false;
    }

    /** Whether sources are registered (admission) rather than learned from JOINs (open mode). */
    public boolean registeredSources()
    {
        return registered;
    }

    public int session()
    {
        return session;
    }

    /** The worker whose rejoin started the current session, or {@link InaggHeader#SESSION_CAUSE_CONTROL_PLANE}. */
    public int sessionCause()
    {
        return sessionCause;
    }

    /** The transport peer that speaks for {@code worker}, or -1 before it joined (open mode). */
    public int peer(final int worker)
    {
        return peers[worker];
    }

    /** Whether {@code peer} speaks for {@code worker} (the worker id must be below W). */
    public boolean isSource(final int worker, final int peer)
    {
        return peers[worker] == peer;
    }

    /**
     * Whether a JOIN of {@code worker} that comes from {@code peer}, the worker's registered source, but through a
     * link-layer source not pinned to it (over DPDK: another MAC than the one the worker's first accepted JOIN pinned,
     * or none pinned yet) may be decided as the source's own, and pin that link-layer source if accepted: when none is
     * pinned yet (the worker's first JOIN), or when the worker has a JOIN credential, which {@link #join} then requires
     * as always (a restarted rank on a new NIC). A worker without a credential keeps the MAC its first accepted JOIN
     * pinned for as long as the transport registers its source: a forger who copies its IPv4 address and UDP port
     * from another MAC neither joins, nor restarts, nor feeds the job. UDP has no link-layer source to pin: its
     * transport never asks.
     */
    public boolean mayPin(final int worker, final int peer, final boolean pinned)
    {
        return registered && worker >= 0 && worker < workers && peers[worker] == peer
            && (!pinned || credentials[worker] != InaggHeader.NO_CREDENTIAL);
    }

    /** Whether {@code session} is the current one. */
    public boolean isCurrent(final int session)
    {
        return this.session == session;
    }

    /** The {@link RejectReason} of the last {@link #join} that returned {@link #REJECT}. */
    public int rejectReason()
    {
        return rejectReason;
    }

    /** Whether the last accepted {@link #join} started a new session (the caller resets the job's state). */
    public boolean sessionStarted()
    {
        return sessionStarted;
    }

    /**
     * Decides a JOIN of a known job.
     *
     * @param worker           the worker id it claims.
     * @param claimedWorkers   the W the worker was configured with.
     * @param requestedSession the session it asks for, or {@link InaggHeader#ANY_SESSION}.
     * @param incarnation      its incarnation, or 0 if it states none.
     * @param peer             where it came from.
     * @param served           whether this node serves that worker id at all (two-level aggregation serves some).
     * @return {@link #ACCEPT}, {@link #REJECT} ({@link #rejectReason()}) or {@link #SPOOFED}.
     */
    public int join(final int worker, final int claimedWorkers, final int requestedSession, final long incarnation,
        final int peer, final boolean served)
    {
        return join(worker, claimedWorkers, requestedSession, incarnation, InaggHeader.NO_CREDENTIAL, peer, served);
    }

    /**
     * As {@link #join(int, int, int, long, int, boolean)}, for a JOIN showing {@code credential}.
     *
     * @return {@link #ACCEPT}, {@link #REJECT} ({@link #rejectReason()}), {@link #SPOOFED} or {@link #BAD_CREDENTIAL}.
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public int join(final int worker, final int claimedWorkers, final int requestedSession, final long incarnation,
        final long credential, final int peer, final boolean served)
    {
        sessionStarted = false;
        if (worker < 0 || worker >= workers || !served)
        {
            return reject(RejectReason.WORKER_ID_OUT_OF_RANGE);
        }
        if (registered && peers[worker] != peer)
        {
            return SPOOFED;
        }
        if (credentials[worker] != InaggHeader.NO_CREDENTIAL && credentials[worker] != credential)
        {
            // Not the worker's secret: nothing about the job changes (session, incarnation, source), no answer.
            return BAD_CREDENTIAL;
        }
        if (claimedWorkers != workers)
        {
            return reject(RejectReason.WORKER_COUNT_MISMATCH);
        }
        if (requestedSession != InaggHeader.ANY_SESSION && requestedSession != session
            || newSessionOnRejoin && !inSession[worker] && incarnation != 0 && incarnations[worker] == incarnation)
        {
            // Asks for another session, or is a process of an earlier run of the job (it never joins a later one).
            return reject(RejectReason.STALE_SESSION);
        }
        if (newSessionOnRejoin && inSession[worker] && incarnation != 0 && incarnations[worker] != 0
            && incarnations[worker] != incarnation)
        {
            // A restarted worker: the run it belonged to is over. Everyone joins the next session afresh.
            session = (session + 1) & 0xFFFF;
            sessionCause = worker;
            Arrays.fill(inSession, false);
            sessionStarted = true;
        }
        inSession[worker] = true;
        if (incarnation != 0)
        {
            incarnations[worker] = incarnation;
        }
        if (!registered)
        {
            peers[worker] = peer;
        }
        return ACCEPT;
    }

    /**
     * Starts {@code next} as the job's session by the control plane's word: every worker joins it afresh; the caller
     * resets the job's aggregation state.
     */
    public void startSession(final int next)
    {
        session = requireSession(jobId, next);
        sessionCause = InaggHeader.SESSION_CAUSE_CONTROL_PLANE;
        Arrays.fill(inSession, false);
    }

    private int reject(final int reason)
    {
        rejectReason = reason;
        return REJECT;
    }
}
