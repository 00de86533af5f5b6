package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The lifecycle of the controller's jobs: the rules, on an injected clock, with no HTTP, no JSON and no switch call.
 * <ul>
 *   <li><b>Admission.</b> The first rank to register a name admits the job: a job id, a slot range and a session
 *   ({@link RegistryState#admit}). Later ranks must agree on the world size, dtype, element count and slots (MISMATCH
 *   naming the difference).</li>
 *   <li><b>Start.</b> Once every rank registered into the current session, the switch must hold the job, its session
 *   and every rank's source; once it does, the job runs ({@link SwitchSync}).</li>
 *   <li><b>Restart.</b> A rank that registers for a running job is a restarted process: the job moves to the next
 *   session at once and must be programmed again, so the old run's survivors are answered STALE_SESSION by the switch
 *   and GONE here; they register again, and the job starts when all W have.</li>
 *   <li><b>Leases.</b> Each registration holds a lease, renewed by the rank; a rank that stops renewing is lost
 *   ({@link #sweep}). A rank that ends deletes its registration. When no rank of a job holds a registration, the job
 *   is retired, for the switch to drop.</li>
 *   <li><b>Who may.</b> {@link JobAccess}.</li>
 * </ul>
 * Every change is journaled before it is answered and logged once with the job's name, id and session. Thread-safe:
 * each method holds the registry state's monitor for its own length only, so no caller holds it while it calls the
 * switch.
 */
final class JobLifecycle implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(JobLifecycle.class.getName());
    /** {@link #join}'s "the switch's session was not asked". */
    static final int NOT_ASKED = -1;

    private final RegistryState state;
    private final int lanes;
    private final int defaultSlots;
    private final JobAccess access;

    JobLifecycle(final RegistryState state, final int lanes, final int defaultSlots, final JobAccess access)
    {
        this.state = state;
        this.lanes = lanes;
        this.defaultSlots = defaultSlots;
        this.access = access;
    }

    /**
     * What a registration did; {@code askSessionOf} > 0: nothing yet, ask the switch for that job's session and join
     * again with it ({@link SwitchSync#sessionOf}).
     */
    record Joined(ControlledJob job, Registration registration, String newSecret, int askSessionOf)
    {
    }

    /** The outcome of a lease renewal. */
    record Renewed(String registration, String name, int jobId, int session)
    {
    }

    /** The outcome of a deleted registration: its job, and whether it was the last (the job is retired). */
    record Released(ControlledJob job, boolean retired)
    {
    }

    /** The outcome of a sweep: ranks lost, and the jobs retired with them (for the switch to drop). */
    record Swept(int lost, List<ControlledJob> retired)
    {
    }

    long leaseMs()
    {
        return state.leaseMs();
    }

    /**
     * A rank registers. The first registration of a job sets its secret (the caller's, or a new one in
     * {@link Joined#newSecret}). A rank of a running job is a restart unless it is the same process asking again.
     *
     * @param switchSession the switch's session for the job if asked (0: none), else {@link #NOT_ASKED}.
     */
    Joined join(final RegisterRequest request, final Caller caller, final int switchSession)
    {
        access.requireOwnSource(request, caller);
        synchronized (state)
        {
            ControlledJob job = state.job(request.name());
            String newSecret = null;
            if (job == null)
            {
                newSecret = caller.jobSecret() == null ? JobSecret.generate() : null;
                job = admit(request, JobSecret.hash(newSecret != null ? newSecret : caller.jobSecret()));
            }
            else
            {
                JobAccess.authorize(job, caller, "register rank " + request.rank() + " of");
                requireSame(job, request);
            }
            final Registration existing = job.ranks[request.rank()];
            if (existing != null && request.incarnation() != null
                && request.incarnation().equals(existing.incarnation) && existing.source.equals(request.source()))
            {
                existing.leaseDeadlineMs = state.nowMs() + state.leaseMs();
                return new Joined(job, existing, newSecret, 0); // the same process asking again (a lost answer)
            }
            if (job.running && switchSession == NOT_ASKED)
            {
                return new Joined(job, null, null, job.jobId);
            }
            if (existing != null)
            {
                state.removeRegistration(existing.id);
            }
            if (job.running)
            {
                return new Joined(job, restart(job, request, switchSession), null, 0);
            }
            final Registration registration = state.register(job, request);
            final ControlledJob waiting = job;
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: rank " + request.rank() + " joined "
                + waiting.describe() + " from " + format(request.source()) + (existing != null
                ? " (replacing its earlier registration)" : "") + ": " + waiting.registered() + " of " + waiting.world
                + " ranks registered");
            state.journalRank(job, request.rank());
            return new Joined(job, registration, newSecret, 0);
        }
    }

    /** A rank of a running job registered again: the job moves to a session after the switch's own. */
    private Registration restart(final ControlledJob job, final RegisterRequest request, final int switchSession)
    {
        job.running = false;
        job.reprogram = true;
        job.session = state.takeSessionAfter(switchSession);
        final Registration registration = state.register(job, request);
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " started: rank "
            + request.rank() + " registered again from " + format(request.source())
            + " (a restarted process); the old session's ranks are refused as stale and must register again");
        state.journalJob(job);
        state.journalRank(job, request.rank());
        return registration;
    }

    /** The registration as its rank sees it now ({@code newSecret}: the secret {@link #join} made, or null). */
    RankStatus status(final ControlledJob job, final Registration registration, final String newSecret)
    {
        synchronized (state)
        {
            final boolean ready = job.running && registration.session == job.session;
            final int registered = job.registered();
            return new RankStatus(registration.id, job.name, job.jobId, job.session, job.world, registration.rank,
                ready, registration.joinCredential, job.slots, job.slotBase, job.lanes, job.dtype, job.elements,
                registered, job.missing(), registered == job.world ? job.switchError : null, newSecret);
        }
    }

    /**
     * A rank polls its registration: the registration and its job, the lease renewed.
     *
     * @throws Refusal GONE if it ended or belongs to an older session; NOT_ALLOWED for a stranger.
     */
    Joined poll(final String id, final Caller caller)
    {
        synchronized (state)
        {
            final Registration registration = live(id, caller);
            return new Joined(state.job(registration.jobName), registration, null, 0);
        }
    }

    /** @throws Refusal as {@link #poll}. */
    Renewed renew(final String id, final Caller caller)
    {
        synchronized (state)
        {
            final Registration registration = live(id, caller);
            final ControlledJob job = state.job(registration.jobName);
            return new Renewed(id, job.name, job.jobId, job.session);
        }
    }

    /** The rank is done; the last one retires the job. @throws Refusal UNKNOWN if there is no such registration. */
    Released release(final String id, final Caller caller)
    {
        synchronized (state)
        {
            final Registration registration = state.registration(id);
            if (registration == null)
            {
                throw new Refusal(Refusal.Reason.UNKNOWN, "no registration " + id
                    + " (already deleted, lost, or replaced by a newer registration of its rank)");
            }
            final ControlledJob job = state.job(registration.jobName);
            JobAccess.authorize(job, caller, "delete the registration of rank " + registration.rank + " of");
            state.removeRegistration(id);
            return new Released(job, endRegistration(job, registration, "finished"));
        }
    }

    /** Every job for an operator, else the jobs whose secret the caller shows. */
    JobStatus.Listing jobs(final Caller caller)
    {
        synchronized (state)
        {
            final List<JobStatus> list = state.jobs().stream().filter(job -> JobAccess.allowed(job, caller))
                .map(this::describe).toList();
            return new JobStatus.Listing(list, state.slots().poolSlots(), state.slots().freeSlots());
        }
    }

    /** @throws Refusal UNKNOWN or NOT_ALLOWED. */
    JobStatus job(final String name, final Caller caller)
    {
        synchronized (state)
        {
            final ControlledJob job = known(name);
            JobAccess.authorize(job, caller, "see");
            return describe(job);
        }
    }

    /** An operator (or the job's owner) frees a job now: it is retired, for the switch to drop. */
    ControlledJob free(final String name, final Caller caller)
    {
        synchronized (state)
        {
            final ControlledJob job = known(name);
            JobAccess.authorize(job, caller, "free");
            state.retire(job);
            return job;
        }
    }

    /** Expires the leases past their deadline. Run every fraction of a lease. */
    Swept sweep()
    {
        synchronized (state)
        {
            final long now = state.nowMs();
            final List<Registration> expired = new ArrayList<>();
            for (final Registration registration : state.registrations())
            {
                if (now - registration.leaseDeadlineMs > 0)
                {
                    expired.add(registration);
                }
            }
            final List<ControlledJob> retired = new ArrayList<>();
            for (final Registration registration : expired)
            {
                if (state.removeRegistration(registration.id) == null)
                {
                    continue; // its job was retired by an earlier one
                }
                final ControlledJob job = state.job(registration.jobName);
                try
                {
                    if (endRegistration(job, registration, "lost (no lease renewal for " + state.leaseMs() + " ms)"))
                    {
                        retired.add(job);
                    }
                }
                catch (final Refusal ex) // the journal: the rank is lost all the same, and the others go on
                {
                    LOGGER.log(System.Logger.Level.WARNING, () -> "controller: lease sweep: " + ex.getMessage());
                }
            }
            return new Swept(expired.size(), retired);
        }
    }

    /**
     * Rebuilds the state from the journal (every lease starts afresh) and compacts it; the switch is checked after,
     * without the lock ({@link SwitchSync#reconcile}).
     *
     * @return the number of jobs recovered.
     */
    int recover()
    {
        synchronized (state)
        {
            for (final ControlledJob job : state.recover())
            {
                LOGGER.log(System.Logger.Level.WARNING, () -> "controller: journal: " + job.describe() + "'s slots "
                    + job.slotBase + "+" + job.slots + " overlap another's or leave the pool; job dropped");
            }
            for (final ControlledJob job : state.jobs())
            {
                LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " recovered from the"
                    + " journal (" + (job.running ? "running" : "waiting") + ", " + job.registered() + " of "
                    + job.world + " ranks registered; leases restart now)");
            }
            return state.jobs().size();
        }
    }

    int jobCount()
    {
        synchronized (state)
        {
            return state.jobs().size();
        }
    }

    int freeSlots()
    {
        synchronized (state)
        {
            return state.slots().freeSlots();
        }
    }

    @Override
    public void close()
    {
        synchronized (state)
        {
            state.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Under the registry state's monitor

    private ControlledJob admit(final RegisterRequest request, final String secretHash)
    {
        final int jobSlots = request.slots() > 0 ? request.slots()
            : (int)Math.min(defaultSlots, Math.max(1, (request.elements() + lanes - 1) / lanes));
        if (jobSlots > state.slots().poolSlots())
        {
            throw new Refusal(Refusal.Reason.NO_ROOM, "job '" + request.name() + "' asks for " + jobSlots
                + " slots but the switch's pool has " + state.slots().poolSlots());
        }
        final ControlledJob job = state.admit(request, jobSlots, lanes, secretHash);
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " admitted: " + job.world
            + " ranks, " + job.dtype + ", " + job.elements + " elements, slots " + job.slotBase + ".."
            + (job.slotBase + job.slots - 1) + " of " + job.lanes + " lanes");
        return job;
    }

    private static void requireSame(final ControlledJob job, final RegisterRequest request)
    {
        final String rank = "rank " + request.rank() + " of job '" + job.name + "'";
        if (request.world() != job.world)
        {
            throw new Refusal(Refusal.Reason.MISMATCH, rank + " says world size " + request.world()
                + " but the job was admitted with " + job.world);
        }
        if (!request.dtype().equals(job.dtype))
        {
            throw new Refusal(Refusal.Reason.MISMATCH, rank + " says dtype " + request.dtype()
                + " but the job was admitted with " + job.dtype);
        }
        if (request.elements() != job.elements)
        {
            throw new Refusal(Refusal.Reason.MISMATCH, rank + " says " + request.elements()
                + " elements but the job was admitted with " + job.elements);
        }
        if (request.slots() > 0 && request.slots() != job.slots)
        {
            throw new Refusal(Refusal.Reason.MISMATCH, rank + " asks for " + request.slots()
                + " slots but the job was admitted with " + job.slots);
        }
    }

    /**
     * Ends one registration of {@code job} ({@code how}: finished or lost); if it was the last, retires the job and
     * returns true.
     */
    private boolean endRegistration(final ControlledJob job, final Registration registration, final String how)
    {
        final boolean current = job.ranks[registration.rank] == registration;
        if (current)
        {
            job.ranks[registration.rank] = null;
        }
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: rank " + registration.rank + " of " + job.describe()
            + " " + how + (registration.session != job.session ? " (it belonged to session " + registration.session
            + ")" : ""));
        if (!job.hasRegistrations())
        {
            state.retire(job);
            return true;
        }
        if (current)
        {
            state.journalRank(job, registration.rank);
        }
        return false;
    }

    private Registration live(final String id, final Caller caller)
    {
        final Registration registration = state.registration(id);
        if (registration == null)
        {
            throw new Refusal(Refusal.Reason.GONE, "registration " + id + " is gone (deleted, lost, or replaced by"
                + " a newer registration of its rank); register again");
        }
        final ControlledJob job = state.job(registration.jobName);
        JobAccess.authorize(job, caller, "poll or renew rank " + registration.rank + " of");
        if (registration.session != job.session)
        {
            throw new Refusal(Refusal.Reason.GONE, "rank " + registration.rank + " of job '" + job.name
                + "' registered into session " + registration.session + " but the job moved to session "
                + job.session + " (another rank restarted); register again");
        }
        registration.leaseDeadlineMs = state.nowMs() + state.leaseMs();
        return registration;
    }

    private ControlledJob known(final String name)
    {
        final ControlledJob job = state.job(name);
        if (job == null)
        {
            throw new Refusal(Refusal.Reason.UNKNOWN, "unknown job '" + name + "'");
        }
        return job;
    }

    private JobStatus describe(final ControlledJob job)
    {
        final long now = state.nowMs();
        final JobStatus.RankLease[] ranks = new JobStatus.RankLease[job.world];
        for (int rank = 0; rank < job.world; rank++)
        {
            final Registration registration = job.ranks[rank];
            if (registration != null)
            {
                ranks[rank] = new JobStatus.RankLease(rank, registration.source, registration.session,
                    registration.leaseDeadlineMs - now);
            }
        }
        return new JobStatus(job.name, job.jobId, job.session, job.running, job.world, job.dtype, job.elements,
            job.slotBase, job.slots, job.lanes, job.registered(), Collections.unmodifiableList(Arrays.asList(ranks)));
    }

    /** ip:port, for log lines. */
    static String format(final InetSocketAddress address)
    {
        return address.getAddress().getHostAddress() + ":" + address.getPort();
    }
}
