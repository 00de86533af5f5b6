package org.inagg.services.controller;

import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;
import org.inagg.wire.InaggHeader;

/**
 * The controller's state and its rules: admission, slot ranges, sessions, leases, and what goes to the switch.
 * <ul>
 *   <li><b>Admission.</b> The first rank to register a name admits the job: a job id (the lowest free, never one a
 *   switch holds for someone else or that is still being removed from it), a slot range ({@link SlotAllocator}) and a
 *   session. Later ranks must agree on the world size, dtype, element count and slots (409 naming the difference).</li>
 *   <li><b>Start.</b> Once every rank registered into the current session, the switch is programmed with the job,
 *   its session and every rank's source, and the registrations are answered with their assignment.</li>
 *   <li><b>Restart.</b> A rank that registers for a running job is a restarted process: the job moves to the next
 *   session at once and the switch is reprogrammed with it, so the old run's survivors are answered STALE_SESSION
 *   and fail with {@code SessionChangedException}; they register again, and the job starts when all W have.</li>
 *   <li><b>Leases.</b> Each registration holds a lease, renewed by the rank; a rank that stops renewing is lost. A
 *   rank that ends deletes its registration. When no rank of a job holds a registration, the job is freed: removed
 *   from the switch, then its slots and id returned.</li>
 *   <li><b>Who may.</b> The first registration of a job sets its secret ({@link JobSecret}); every later registration,
 *   poll, renewal, removal and look at the job must show it, or the operator's token ({@link Caller}); 403 naming the
 *   job otherwise. A registration's stated source must be the IP its HTTP request comes from unless the controller
 *   trusts stated sources.</li>
 * </ul>
 * Every change is journaled ({@link JournalRecords}: a line per change, not per job) before it is answered and
 * logged once with the job's name, id and session. Thread-safe: one lock guards the state, and the switch is never
 * called under it (a call may take the backend's whole timeout, seconds, while other jobs renew leases of a few):
 * a change takes the lock, decides what the switch must hold, and lets go; the call is made under the job's own
 * {@link ControlledJob#switchLock}, so one job's calls reach the switch in order; the lock is taken again to record
 * what the switch answered, and if the job changed meanwhile its latest program is sent. Only {@link #recover()},
 * before anything is served, calls the switch under the lock.
 */
final class JobRegistry implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(JobRegistry.class.getName());
    /** {@link #register}'s "the switch's session was not asked". */
    private static final int NOT_ASKED = -1;
    /** Installs one call makes at most for a job that keeps changing meanwhile; its next poll goes on. */
    private static final int MAX_INSTALLS_PER_CALL = 4;

    private final Object lock = new Object();
    private final SwitchBackend backend;
    private final Journal journal;
    private final SlotAllocator slots;
    private final LongSupplier clockMs;
    private final long leaseMs;
    private final int lanes;
    private final int defaultSlots;
    private final boolean trustSources;
    private final Map<String, ControlledJob> jobs = new LinkedHashMap<>();
    private final Map<String, Registration> registrations = new HashMap<>();
    /** Job ids a switch holds for someone else (found there, not installed by this controller). */
    private final Set<Integer> foreignJobIds = new HashSet<>();
    /** Freed jobs the switch may still hold, by id: their ids and slots are not given out until it no longer does. */
    private final Map<Integer, ControlledJob> removing = new LinkedHashMap<>();
    private int nextSession = 1;

    JobRegistry(final SwitchBackend backend, final Journal journal, final SlotAllocator slots, final LongSupplier clockMs,
        final long leaseMs, final int lanes, final int defaultSlots, final boolean trustSources)
    {
        this.trustSources = trustSources;
        this.backend = backend;
        this.journal = journal;
        this.slots = slots;
        this.clockMs = clockMs;
        this.leaseMs = leaseMs;
        this.lanes = lanes;
        this.defaultSlots = defaultSlots;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Requests

    /** {@link #register(RegisterRequest, Caller)} by an operator (embedding code, tests). */
    JsonHttp.Answer register(final RegisterRequest request)
    {
        return register(request, Caller.embedded());
    }

    /** What a registration did under the lock; {@code askSessionOf} > 0: ask the switch for that job's session first. */
    private record Joined(ControlledJob job, Registration registration, String newSecret, int askSessionOf)
    {
    }

    /**
     * {@code POST /v1/registrations}: 200 with the assignment once the job runs, 202 while ranks are missing. The first
     * registration of a job sets its secret (the caller's, or a new one in the answer's {@code jobSecret}).
     */
    JsonHttp.Answer register(final RegisterRequest request, final Caller caller)
    {
        requireOwnSource(request, caller);
        int switchSession = NOT_ASKED;
        Joined joined;
        while (true)
        {
            synchronized (lock)
            {
                joined = join(request, caller, switchSession);
            }
            if (joined.askSessionOf() == 0)
            {
                break;
            }
            switchSession = switchSession(joined.askSessionOf());
        }
        syncSwitch(joined.job(), true);
        synchronized (lock)
        {
            final JsonHttp.Answer answer = answer(joined.job(), joined.registration());
            if (joined.newSecret() != null)
            {
                ((ObjectNode)answer.body()).put("jobSecret", joined.newSecret());
            }
            return answer;
        }
    }

    /** Under the lock. {@code switchSession}: the switch's session for the job if asked (0: none), else NOT_ASKED. */
    private Joined join(final RegisterRequest request, final Caller caller, final int switchSession)
    {
        ControlledJob job = jobs.get(request.name());
        String newSecret = null;
        if (job == null)
        {
            newSecret = caller.jobSecret() == null ? JobSecret.generate() : null;
            job = admit(request, JobSecret.hash(newSecret != null ? newSecret : caller.jobSecret()));
        }
        else
        {
            authorize(job, caller, "register rank " + request.rank() + " of");
            requireSame(job, request);
        }
        final Registration existing = job.ranks[request.rank()];
        if (existing != null && request.incarnation() != null && request.incarnation().equals(existing.incarnation)
            && existing.source.equals(request.source()))
        {
            existing.leaseDeadlineMs = clockMs.getAsLong() + leaseMs;
            return new Joined(job, existing, newSecret, 0); // the same process asking again (a lost answer)
        }
        if (job.running && switchSession == NOT_ASKED)
        {
            return new Joined(job, null, null, job.jobId);
        }
        if (existing != null)
        {
            registrations.remove(existing.id);
        }
        if (job.running)
        {
            job.running = false;
            job.reprogram = true;
            if (switchSession >= nextSession)
            {
                nextSession = switchSession % 0xFFFF + 1;
            }
            job.session = takeSession();
            final Registration registration = newRegistration(job, request);
            final ControlledJob restarted = job;
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + restarted.describe() + " started: rank "
                + request.rank() + " registered again from " + JsonHttp.format(request.source())
                + " (a restarted process); the old session's ranks are refused as stale and must register again");
            journal(JournalRecords.job(job, nextSession));
            journal(JournalRecords.rank(job, request.rank()));
            return new Joined(job, registration, null, 0);
        }
        final Registration registration = newRegistration(job, request);
        final ControlledJob waiting = job;
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: rank " + request.rank() + " joined "
            + waiting.describe() + " from " + JsonHttp.format(request.source()) + (existing != null
            ? " (replacing its earlier registration)" : "") + ": " + waiting.registered() + " of " + waiting.world
            + " ranks registered");
        journal(JournalRecords.rank(job, request.rank()));
        return new Joined(job, registration, newSecret, 0);
    }

    /** {@code GET /v1/registrations/{id}}: as {@link #register}'s answer now; renews the lease. */
    JsonHttp.Answer status(final String id, final Caller caller)
    {
        final Registration registration;
        final ControlledJob job;
        synchronized (lock)
        {
            registration = live(id, caller);
            job = jobs.get(registration.jobName);
        }
        syncSwitch(job, false);
        synchronized (lock)
        {
            return answer(job, registration);
        }
    }

    /** {@code PUT /v1/registrations/{id}/lease}. */
    JsonHttp.Answer renew(final String id, final Caller caller)
    {
        synchronized (lock)
        {
            final Registration registration = live(id, caller);
            final ControlledJob job = jobs.get(registration.jobName);
            return new JsonHttp.Answer(200, JsonHttp.MAPPER.createObjectNode().put("registration", id)
                .put("name", job.name).put("jobId", job.jobId).put("session", job.session).put("leaseMs", leaseMs));
        }
    }

    /** {@code DELETE /v1/registrations/{id}}: the rank is done; the last one frees the job. */
    JsonHttp.Answer release(final String id, final Caller caller)
    {
        final ControlledJob job;
        final boolean freed;
        synchronized (lock)
        {
            final Registration registration = registrations.get(id);
            if (registration == null)
            {
                throw new HttpFailure(HttpFailure.NOT_FOUND, "no registration " + id
                    + " (already deleted, lost, or replaced by a newer registration of its rank)");
            }
            job = jobs.get(registration.jobName);
            authorize(job, caller, "delete the registration of rank " + registration.rank + " of");
            registrations.remove(id);
            freed = endRegistration(job, registration, "finished");
        }
        if (freed)
        {
            removeFromSwitch(job, "all ranks finished");
        }
        return new JsonHttp.Answer(200, JsonHttp.MAPPER.createObjectNode().put("registration", id)
            .put("name", job.name).put("jobId", job.jobId).put("jobFreed", freed));
    }

    /** {@code GET /v1/jobs}: every job for an operator, else the jobs whose secret the caller shows. */
    ObjectNode jobs(final Caller caller)
    {
        synchronized (lock)
        {
            final ObjectNode answer = JsonHttp.MAPPER.createObjectNode();
            final ArrayNode list = answer.putArray("jobs");
            jobs.values().stream().filter(job -> allowed(job, caller)).forEach(job -> list.add(describe(job)));
            answer.put("poolSlots", slots.poolSlots()).put("freeSlots", slots.freeSlots());
            return answer;
        }
    }

    /** {@code GET /v1/jobs/{name}}. */
    ObjectNode job(final String name, final Caller caller)
    {
        synchronized (lock)
        {
            final ControlledJob job = known(name);
            authorize(job, caller, "see");
            return describe(job);
        }
    }

    /** {@code DELETE /v1/jobs/{name}}: an operator frees a job now. */
    ObjectNode free(final String name, final Caller caller)
    {
        final ControlledJob job;
        synchronized (lock)
        {
            job = known(name);
            authorize(job, caller, "free");
            retire(job);
        }
        removeFromSwitch(job, caller.operator() ? "freed by an operator" : "freed by a holder of its secret");
        return JsonHttp.MAPPER.createObjectNode().put("name", name).put("jobId", job.jobId).put("freed", true);
    }

    /** Expires the leases past their deadline; returns how many ranks were lost. Run every fraction of a lease. */
    int sweep()
    {
        final List<ControlledJob> freed = new ArrayList<>();
        final int lost;
        synchronized (lock)
        {
            final long now = clockMs.getAsLong();
            final List<Registration> expired = new ArrayList<>();
            for (final Registration registration : registrations.values())
            {
                if (now - registration.leaseDeadlineMs > 0)
                {
                    expired.add(registration);
                }
            }
            for (final Registration registration : expired)
            {
                if (registrations.remove(registration.id) == null)
                {
                    continue; // its job was freed by an earlier one
                }
                final ControlledJob job = jobs.get(registration.jobName);
                try
                {
                    if (endRegistration(job, registration, "lost (no lease renewal for " + leaseMs + " ms)"))
                    {
                        freed.add(job);
                    }
                }
                catch (final HttpFailure ex) // the journal: the rank is lost all the same, and the others go on
                {
                    LOGGER.log(System.Logger.Level.WARNING, () -> "controller: lease sweep: " + ex.getMessage());
                }
            }
            lost = expired.size();
        }
        for (final ControlledJob job : freed)
        {
            removeFromSwitch(job, "its ranks vanished (leases expired)");
        }
        return lost;
    }

    int jobCount()
    {
        synchronized (lock)
        {
            return jobs.size();
        }
    }

    int freeSlots()
    {
        synchronized (lock)
        {
            return slots.freeSlots();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Rules

    private static boolean allowed(final ControlledJob job, final Caller caller)
    {
        return caller.operator() || JobSecret.matches(job.secretHash, caller.jobSecret());
    }

    /** @throws HttpFailure 403 naming the job and what was tried, unless the caller is its owner or an operator. */
    private static void authorize(final ControlledJob job, final Caller caller, final String what)
    {
        if (!allowed(job, caller))
        {
            throw new HttpFailure(HttpFailure.FORBIDDEN, "may not " + what + " job '" + job.name + "': "
                + (caller.jobSecret() == null ? "no " : "wrong ") + JobSecret.HEADER + " (the ranks of one job share"
                + " its secret, e.g. through " + JobSecret.ENV + "; an operator's token may act on any job)");
        }
    }

    /** @throws HttpFailure 403 naming both addresses if the stated source is not the caller's (unless trusted). */
    private void requireOwnSource(final RegisterRequest request, final Caller caller)
    {
        final java.net.InetAddress stated = request.source().getAddress();
        if (trustSources || caller.operator() || stated.equals(caller.address())
            || stated.isLoopbackAddress() && caller.address().isLoopbackAddress()) // 127.0.0.1 and ::1: this host
        {
            return;
        }
        throw new HttpFailure(HttpFailure.FORBIDDEN, "rank " + request.rank() + " of job '" + request.name()
            + "' states UDP source " + request.source().getAddress().getHostAddress() + " but its request comes from "
            + caller.address().getHostAddress() + "; a rank registers the address it sends from (a controller behind"
            + " NAT or on a separate management network runs with --trust-sources)");
    }

    private ControlledJob admit(final RegisterRequest request, final String secretHash)
    {
        final int jobSlots = request.slots() > 0 ? request.slots()
            : (int)Math.min(defaultSlots, Math.max(1, (request.elements() + lanes - 1) / lanes));
        if (jobSlots > slots.poolSlots())
        {
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "job '" + request.name() + "' asks for " + jobSlots
                + " slots but the switch's pool has " + slots.poolSlots());
        }
        final int jobId = freeJobId();
        final int base = slots.allocate(jobSlots, request.name());
        if (base < 0)
        {
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "no free slots for job '" + request.name() + "': it needs "
                + jobSlots + " contiguous slots and " + slots.freeSlots() + " of the pool's " + slots.poolSlots()
                + " are free, not in one range; retry when a job ends");
        }
        final ControlledJob job = new ControlledJob(request.name(), jobId, request.world(), request.dtype(),
            request.elements(), base, jobSlots, lanes, takeSession(), secretHash);
        jobs.put(job.name, job);
        journal(JournalRecords.job(job, nextSession));
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " admitted: " + job.world
            + " ranks, " + job.dtype + ", " + job.elements + " elements, slots " + job.slotBase + ".."
            + (job.slotBase + job.slots - 1) + " of " + job.lanes + " lanes on " + backend.describe());
        return job;
    }

    private int freeJobId()
    {
        final Set<Integer> used = new HashSet<>(foreignJobIds);
        used.addAll(removing.keySet());
        jobs.values().forEach(job -> used.add(job.jobId));
        for (int id = 1; id <= InaggHeader.MAX_JOB_ID; id++)
        {
            if (!used.contains(id))
            {
                return id;
            }
        }
        throw new HttpFailure(HttpFailure.UNAVAILABLE, "no free job id (" + used.size() + " in use)");
    }

    private static void requireSame(final ControlledJob job, final RegisterRequest request)
    {
        final String rank = "rank " + request.rank() + " of job '" + job.name + "'";
        if (request.world() != job.world)
        {
            throw new HttpFailure(HttpFailure.CONFLICT, rank + " says world size " + request.world()
                + " but the job was admitted with " + job.world);
        }
        if (!request.dtype().equals(job.dtype))
        {
            throw new HttpFailure(HttpFailure.CONFLICT, rank + " says dtype " + request.dtype()
                + " but the job was admitted with " + job.dtype);
        }
        if (request.elements() != job.elements)
        {
            throw new HttpFailure(HttpFailure.CONFLICT, rank + " says " + request.elements()
                + " elements but the job was admitted with " + job.elements);
        }
        if (request.slots() > 0 && request.slots() != job.slots)
        {
            throw new HttpFailure(HttpFailure.CONFLICT, rank + " asks for " + request.slots()
                + " slots but the job was admitted with " + job.slots);
        }
    }

    private Registration newRegistration(final ControlledJob job, final RegisterRequest request)
    {
        String id;
        do
        {
            id = JobSecret.randomId();
        }
        while (registrations.containsKey(id));
        final Registration registration = new Registration(id, job.name, request.rank(), request.source(),
            request.incarnation(), job.session, clockMs.getAsLong() + leaseMs, JobSecret.joinCredential());
        registrations.put(id, registration);
        job.put(registration);
        return registration;
    }

    /**
     * Asks the switch for its session of job {@code jobId} (0: it holds none, or cannot be asked), outside the lock.
     * A software switch starts a session by itself when a process rejoins with a new incarnation from a registered
     * source without asking the controller (a worker restarted by hand on its old port); a number the controller then
     * issued could equal that session, and the bypassing run's packets would count in the new one. Asking costs one
     * call, on restarts only; an unreachable switch is programmed the same way and retried, the journal's number
     * stands.
     */
    private int switchSession(final int jobId)
    {
        try
        {
            final JobProgram onSwitch = backend.installed().get(jobId);
            return onSwitch == null ? 0 : onSwitch.session();
        }
        catch (final RuntimeException ex)
        {
            return 0;
        }
    }

    private int takeSession()
    {
        final int session = nextSession;
        nextSession = nextSession % 0xFFFF + 1; // 1..65535: 0 is a JOIN's "any session"
        return session;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The switch, outside the lock

    /**
     * Brings the switch to what {@code job} needs now ({@link ControlledJob#needsInstall}): called without the lock,
     * it takes the job's switch lock ({@code wait}: waiting for another call on the same job; else leaving it to that
     * call), reads the program under the lock, installs it without, and records the outcome under the lock: running
     * once every rank registered, or the switch's error for the next poll. If the job changed during the call, its new
     * program is installed in turn.
     */
    private void syncSwitch(final ControlledJob job, final boolean wait)
    {
        if (wait)
        {
            job.switchLock.lock();
        }
        else if (!job.switchLock.tryLock())
        {
            return;
        }
        try
        {
            for (int call = 0; call < MAX_INSTALLS_PER_CALL; call++)
            {
                final JobProgram want;
                synchronized (lock)
                {
                    if (jobs.get(job.name) != job || !job.needsInstall())
                    {
                        return;
                    }
                    want = job.program();
                }
                String error = null;
                try
                {
                    backend.install(want);
                }
                catch (final RuntimeException ex)
                {
                    error = ex.getMessage() != null ? ex.getMessage() : ex.toString();
                }
                synchronized (lock)
                {
                    if (jobs.get(job.name) != job)
                    {
                        return; // freed meanwhile: its removal waits for this call, under the job's switch lock
                    }
                    if (error != null)
                    {
                        final String why = error;
                        job.switchError = error;
                        LOGGER.log(System.Logger.Level.WARNING, () -> "controller: " + job.describe()
                            + ": cannot program " + backend.describe() + " for session " + want.session() + ": " + why
                            + "; the ranks' next poll tries again");
                        return;
                    }
                    if (!want.equals(job.program()))
                    {
                        continue; // a rank registered again during the call: install what stands now
                    }
                    job.switchError = null;
                    job.reprogram = false;
                    if (!job.running && job.registered() == job.world)
                    {
                        job.running = true;
                        journal(JournalRecords.job(job, nextSession));
                        LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " running: all "
                            + job.world + " ranks registered; " + backend.describe() + " admits only "
                            + want.sources().stream().map(JsonHttp::format).toList());
                    }
                    return;
                }
            }
        }
        finally
        {
            job.switchLock.unlock();
        }
    }

    /**
     * Removes a {@link #retire retired} job from the switch, without the lock and after any call on it in flight, then
     * returns its slots and id and journals its end.
     */
    private void removeFromSwitch(final ControlledJob job, final String why)
    {
        job.switchLock.lock();
        try
        {
            String removal = "removed from " + backend.describe();
            try
            {
                if (!backend.remove(job.jobId))
                {
                    removal = "not on " + backend.describe();
                }
            }
            catch (final RuntimeException ex)
            {
                removal = "NOT removed from the switch (" + ex.getMessage() + ")";
            }
            final String how = removal;
            synchronized (lock)
            {
                removing.remove(job.jobId);
                slots.free(job.slotBase);
                LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " freed: " + why + "; "
                    + how + "; slots " + job.slotBase + ".." + (job.slotBase + job.slots - 1) + " returned");
                try
                {
                    journal(JournalRecords.freed(job.name, job.jobId, nextSession));
                }
                catch (final HttpFailure ex)
                {
                    // the job is gone all the same; if the controller restarts first, its registrations come back
                    // from the journal and expire
                    LOGGER.log(System.Logger.Level.WARNING, () -> "controller: " + job.describe() + ": "
                        + ex.getMessage());
                }
            }
        }
        finally
        {
            job.switchLock.unlock();
        }
    }

    /** Under the lock: the job is no longer served; its id and slots stay taken until {@link #removeFromSwitch}. */
    private void retire(final ControlledJob job)
    {
        jobs.remove(job.name);
        for (final Registration registration : job.ranks)
        {
            if (registration != null)
            {
                registrations.remove(registration.id);
            }
        }
        removing.put(job.jobId, job);
    }

    /**
     * Ends one registration of {@code job} ({@code how}: finished or lost); if it was the last, retires the job and
     * returns true: the caller then calls {@link #removeFromSwitch} outside the lock.
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
            retire(job);
            return true;
        }
        if (current)
        {
            journal(JournalRecords.rank(job, registration.rank));
        }
        return false;
    }

    private Registration live(final String id, final Caller caller)
    {
        final Registration registration = registrations.get(id);
        if (registration == null)
        {
            throw new HttpFailure(HttpFailure.GONE, "registration " + id + " is gone (deleted, lost, or replaced by"
                + " a newer registration of its rank); register again");
        }
        final ControlledJob job = jobs.get(registration.jobName);
        authorize(job, caller, "poll or renew rank " + registration.rank + " of");
        if (registration.session != job.session)
        {
            throw new HttpFailure(HttpFailure.GONE, "rank " + registration.rank + " of job '" + job.name
                + "' registered into session " + registration.session + " but the job moved to session "
                + job.session + " (another rank restarted); register again");
        }
        registration.leaseDeadlineMs = clockMs.getAsLong() + leaseMs;
        return registration;
    }

    private ControlledJob known(final String name)
    {
        final ControlledJob job = jobs.get(name);
        if (job == null)
        {
            throw new HttpFailure(HttpFailure.NOT_FOUND, "unknown job '" + name + "'");
        }
        return job;
    }

    private JsonHttp.Answer answer(final ControlledJob job, final Registration registration)
    {
        final ObjectNode body = JsonHttp.MAPPER.createObjectNode();
        body.put("registration", registration.id).put("name", job.name).put("jobId", job.jobId)
            .put("session", job.session).put("world", job.world).put("rank", registration.rank)
            .put("leaseMs", leaseMs);
        if (job.running && registration.session == job.session)
        {
            // the rank's own JOIN credential: only this registration's answer carries it (docs/security.md)
            body.put("state", "ready").put("workerId", registration.rank)
                .put("joinCredential", JobSecret.formatCredential(registration.joinCredential))
                .put("switch", JsonHttp.format(backend.dataAddress())).put("slots", job.slots)
                .put("slotBase", job.slotBase).put("lanes", job.lanes).put("dtype", job.dtype)
                .put("elements", job.elements);
            return new JsonHttp.Answer(200, body);
        }
        body.put("state", "waiting").put("registered", job.registered());
        final ArrayNode missing = body.putArray("missing");
        job.missing().forEach(missing::add);
        if (job.registered() == job.world && job.switchError != null)
        {
            body.put("switchError", job.switchError);
        }
        return new JsonHttp.Answer(202, body);
    }

    private ObjectNode describe(final ControlledJob job)
    {
        final ObjectNode node = JsonHttp.MAPPER.createObjectNode();
        node.put("name", job.name).put("jobId", job.jobId).put("session", job.session)
            .put("state", job.running ? "running" : "waiting").put("world", job.world).put("dtype", job.dtype)
            .put("elements", job.elements).put("slotBase", job.slotBase).put("slots", job.slots)
            .put("lanes", job.lanes).put("registered", job.registered());
        final ArrayNode ranks = node.putArray("ranks");
        final long now = clockMs.getAsLong();
        for (int rank = 0; rank < job.world; rank++)
        {
            final Registration registration = job.ranks[rank];
            if (registration == null)
            {
                ranks.addNull();
                continue;
            }
            ranks.addObject().put("rank", rank).put("source", JsonHttp.format(registration.source))
                .put("session", registration.session).put("leaseLeftMs", registration.leaseDeadlineMs - now);
        }
        return node;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Journal and recovery

    /** Under the lock: appends {@code record}; a journal that cannot be written is a 503 naming it. */
    private void journal(final ObjectNode record)
    {
        try
        {
            journal.append(record);
        }
        catch (final UncheckedIOException ex)
        {
            throw new HttpFailure(HttpFailure.UNAVAILABLE, ex.getMessage() + "; the controller cannot record changes"
                + " until its journal can be written", ex);
        }
        journal.compactIfDue(this::snapshot);
    }

    /** Jobs still being removed first: a live job of the same name is replayed after, and wins. */
    private List<ObjectNode> snapshot()
    {
        final List<ControlledJob> all = new ArrayList<>(removing.values());
        all.addAll(jobs.values());
        return JournalRecords.snapshot(all, nextSession);
    }

    /**
     * Rebuilds the state from the journal (every lease starts afresh), compacts it, then checks the switch: a running
     * job it lacks or holds otherwise (another session, other sources) is installed again; jobs it holds that the
     * controller did not install keep their ids and slot ranges (reserved). Runs before anything is served, so it
     * calls the switch under the lock.
     *
     * @return the number of jobs recovered.
     */
    int recover()
    {
        synchronized (lock)
        {
            final JournalRecords.Replay replay = new JournalRecords.Replay();
            journal.replay(replay::accept);
            nextSession = Math.max(nextSession, replay.nextSession());
            if (replay.skipped() > 0)
            {
                LOGGER.log(System.Logger.Level.WARNING, () -> "controller: journal " + journal.path() + ": "
                    + replay.skipped() + " lines that fit no job skipped");
            }
            final long now = clockMs.getAsLong();
            for (final JournalRecords.Recovered recovered : replay.jobs())
            {
                final ControlledJob job;
                try
                {
                    job = rebuild(recovered, now);
                }
                catch (final RuntimeException ex)
                {
                    LOGGER.log(System.Logger.Level.WARNING, () -> "controller: journal: job '"
                        + recovered.header().path("name").asText() + "' cannot be rebuilt (" + ex.getMessage()
                        + "); job dropped");
                    continue;
                }
                if (job == null)
                {
                    continue;
                }
                jobs.put(job.name, job);
                job.ranksAll(registration -> registrations.put(registration.id, registration));
                LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " recovered from the"
                    + " journal (" + (job.running ? "running" : "waiting") + ", " + job.registered() + " of "
                    + job.world + " ranks registered; leases restart now)");
            }
            journal.tryCompact(snapshot());
            recheckSwitch();
            return jobs.size();
        }
    }

    /**
     * The job a journal left, or null (logged) if its slots are taken.
     *
     * @throws IllegalArgumentException naming the field of a header out of range (the job is dropped).
     */
    private ControlledJob rebuild(final JournalRecords.Recovered recovered, final long now)
    {
        final ObjectNode record = recovered.header();
        requireField(record, "jobId", 1, InaggHeader.MAX_JOB_ID);
        requireField(record, "session", 1, 0xFFFF);
        requireField(record, "slots", 1, slots.poolSlots());
        requireField(record, "slotBase", 0, slots.poolSlots() - 1);
        requireField(record, "lanes", 1, InaggHeader.MAX_ELEMENTS_FOR_1500_MTU);
        requireField(record, "elements", 1, Integer.MAX_VALUE);
        final ControlledJob job = new ControlledJob(record.path("name").asText(), record.path("jobId").asInt(),
            record.path("world").asInt(), record.path("dtype").asText(), record.path("elements").asLong(),
            record.path("slotBase").asInt(), record.path("slots").asInt(), record.path("lanes").asInt(),
            record.path("session").asInt(), record.hasNonNull("secretSha256")
            ? record.path("secretSha256").asText() : null);
        job.running = record.path("running").asBoolean();
        for (int rank = 0; rank < job.world; rank++)
        {
            final ObjectNode line = recovered.ranks()[rank];
            if (line == null)
            {
                continue;
            }
            job.lastSource[rank] = JournalRecords.source(line);
            // a journal of before JOIN credentials: a fresh one, which no process knows yet (safe: never "none")
            job.lastCredential[rank] = credential(line);
            final JsonNode r = line.path("registration");
            if (r.isObject())
            {
                final InetSocketAddress source = JsonHttp.address("source", r.path("source").asText());
                job.ranks[rank] = new Registration(r.path("id").asText(), job.name, rank, source,
                    r.hasNonNull("incarnation") ? r.path("incarnation").asText() : null, r.path("session").asInt(),
                    now + leaseMs, credential(r));
                job.lastCredential[rank] = job.ranks[rank].joinCredential;
                if (job.lastSource[rank] == null)
                {
                    job.lastSource[rank] = source;
                }
            }
        }
        for (int rank = 0; rank < job.world && job.running; rank++)
        {
            job.running = job.lastSource[rank] != null; // a running job knows every rank's source; else it waits
        }
        if (!slots.reserve(job.slotBase, job.slots, job.name))
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: journal: " + job.describe() + "'s slots "
                + job.slotBase + "+" + job.slots + " overlap another's or leave the pool; job dropped");
            return null;
        }
        return job;
    }

    /** The {@code joinCredential} of a journal line, or a fresh one where it has none (an earlier version's). */
    private static long credential(final JsonNode line)
    {
        return line.hasNonNull("joinCredential")
            ? JobSecret.parseCredential("joinCredential", line.path("joinCredential").asText())
            : JobSecret.joinCredential();
    }

    /** See {@link #recover()}. */
    private void recheckSwitch()
    {
        final Map<Integer, JobProgram> installed;
        try
        {
            installed = backend.installed();
        }
        catch (final RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: cannot read the jobs of " + backend.describe()
                + ": " + ex.getMessage() + "; running jobs are installed again when their ranks poll");
            jobs.values().forEach(job -> job.running = false);
            return;
        }
        final Set<Integer> ours = new HashSet<>();
        for (final ControlledJob job : jobs.values())
        {
            ours.add(job.jobId);
            if (!job.running)
            {
                continue;
            }
            final JobProgram want = job.program();
            if (!want.equals(installed.get(job.jobId)))
            {
                LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " is "
                    + (installed.containsKey(job.jobId) ? "installed otherwise" : "missing") + " on "
                    + backend.describe() + "; installing it again");
                if (!installNow(job))
                {
                    job.running = false;
                }
            }
        }
        for (final JobProgram other : installed.values())
        {
            if (ours.contains(other.jobId()))
            {
                continue;
            }
            foreignJobIds.add(other.jobId());
            if (other.slotBase() >= 0 && !slots.reserve(other.slotBase(), other.slots(), "job " + other.jobId()))
            {
                LOGGER.log(System.Logger.Level.WARNING, () -> "controller: job " + other.jobId() + " on "
                    + backend.describe() + " holds slots " + other.slotBase() + "+" + other.slots()
                    + " that overlap the controller's");
            }
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: job " + other.jobId() + " on " + backend.describe()
                + " was not installed by this controller; its id and slots are left alone");
        }
    }

    private static void requireField(final ObjectNode record, final String field, final long min, final long max)
    {
        final JsonNode value = record.path(field);
        if (!value.canConvertToLong() || value.asLong() < min || value.asLong() > max)
        {
            throw new IllegalArgumentException("field '" + field + "' must be in " + min + ".." + max + ", got "
                + value);
        }
    }

    /** {@link #recover()} only (nothing is served yet): installs the job as it stands; false (logged) if refused. */
    private boolean installNow(final ControlledJob job)
    {
        try
        {
            backend.install(job.program());
            job.switchError = null;
            return true;
        }
        catch (final RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: " + job.describe() + ": cannot program "
                + backend.describe() + " for the check after a controller restart: " + ex.getMessage());
            job.switchError = ex.getMessage();
            return false;
        }
    }

    @Override
    public void close()
    {
        synchronized (lock)
        {
            journal.close();
        }
    }
}
