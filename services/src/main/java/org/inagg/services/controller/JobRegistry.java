package org.inagg.services.controller;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
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
 *   switch holds for someone else), a slot range ({@link SlotAllocator}) and a session. Later ranks must agree on the
 *   world size, dtype, element count and slots (409 naming the difference).</li>
 *   <li><b>Start.</b> Once every rank registered into the current session, the switch is programmed with the job,
 *   its session and every rank's source, and the registrations are answered with their assignment.</li>
 *   <li><b>Restart.</b> A rank that registers for a running job is a restarted process: the job moves to the next
 *   session at once and the switch is reprogrammed with it, so the old run's survivors are answered STALE_SESSION
 *   and fail with {@code SessionChangedException}; they register again, and the job starts when all W have.</li>
 *   <li><b>Leases.</b> Each registration holds a lease, renewed by the rank; a rank that stops renewing is lost. A
 *   rank that ends deletes its registration. When no rank of a job holds a registration, the job is freed: removed
 *   from the switch, its slots and id returned.</li>
 *   <li><b>Who may.</b> The first registration of a job sets its secret ({@link JobSecret}); every later registration,
 *   poll, renewal, removal and look at the job must show it, or the operator's token ({@link Caller}); 403 naming the
 *   job otherwise. A registration's stated source must be the IP its HTTP request comes from unless the controller
 *   trusts stated sources.</li>
 * </ul>
 * Every change is journaled before it is answered and logged once with the job's name, id and session. Thread-safe
 * (one lock; the switch is called under it, bounded by the backend's timeout).
 */
final class JobRegistry implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(JobRegistry.class.getName());

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
    synchronized JsonHttp.Answer register(final RegisterRequest request)
    {
        return register(request, Caller.embedded());
    }

    /**
     * {@code POST /v1/registrations}: 200 with the assignment once the job runs, 202 while ranks are missing. The first
     * registration of a job sets its secret (the caller's, or a new one in the answer's {@code jobSecret}).
     */
    synchronized JsonHttp.Answer register(final RegisterRequest request, final Caller caller)
    {
        requireOwnSource(request, caller);
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
        final JsonHttp.Answer answer = join(job, request);
        if (newSecret != null)
        {
            ((ObjectNode)answer.body()).put("jobSecret", newSecret);
        }
        return answer;
    }

    private JsonHttp.Answer join(final ControlledJob job, final RegisterRequest request)
    {
        final Registration existing = job.ranks[request.rank()];
        if (existing != null && request.incarnation() != null && request.incarnation().equals(existing.incarnation)
            && existing.source.equals(request.source()))
        {
            existing.leaseDeadlineMs = clockMs.getAsLong() + leaseMs;
            return answer(job, existing); // the same process asking again (a lost answer)
        }
        if (existing != null)
        {
            registrations.remove(existing.id);
        }
        if (job.running)
        {
            job.running = false;
            job.session = takeSessionAfterSwitch(job.jobId);
            final Registration registration = newRegistration(job, request);
            final ControlledJob restarted = job;
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + restarted.describe() + " started: rank "
                + request.rank() + " registered again from " + JsonHttp.format(request.source())
                + " (a restarted process); the old session's ranks are refused as stale and must register again");
            journal(job);
            program(job, "session " + job.session + " after rank " + request.rank() + " restarted");
            return answer(job, registration);
        }
        final Registration registration = newRegistration(job, request);
        final ControlledJob waiting = job;
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: rank " + request.rank() + " joined "
            + waiting.describe() + " from " + JsonHttp.format(request.source()) + (existing != null
            ? " (replacing its earlier registration)" : "") + ": " + waiting.registered() + " of " + waiting.world
            + " ranks registered");
        journal(job);
        tryStart(job);
        return answer(job, registration);
    }

    /** {@code GET /v1/registrations/{id}}: as {@link #register}'s answer now; renews the lease. */
    synchronized JsonHttp.Answer status(final String id, final Caller caller)
    {
        final Registration registration = live(id, caller);
        final ControlledJob job = jobs.get(registration.jobName);
        tryStart(job);
        return answer(job, registration);
    }

    /** {@code PUT /v1/registrations/{id}/lease}. */
    synchronized JsonHttp.Answer renew(final String id, final Caller caller)
    {
        final Registration registration = live(id, caller);
        final ControlledJob job = jobs.get(registration.jobName);
        return new JsonHttp.Answer(200, JsonHttp.MAPPER.createObjectNode().put("registration", id)
            .put("name", job.name).put("jobId", job.jobId).put("session", job.session).put("leaseMs", leaseMs));
    }

    /** {@code DELETE /v1/registrations/{id}}: the rank is done; the last one frees the job. */
    synchronized JsonHttp.Answer release(final String id, final Caller caller)
    {
        final Registration registration = registrations.get(id);
        if (registration == null)
        {
            throw new HttpFailure(HttpFailure.NOT_FOUND, "no registration " + id
                + " (already deleted, lost, or replaced by a newer registration of its rank)");
        }
        final ControlledJob job = jobs.get(registration.jobName);
        authorize(job, caller, "delete the registration of rank " + registration.rank + " of");
        registrations.remove(id);
        final boolean freed = endRegistration(job, registration, "finished");
        return new JsonHttp.Answer(200, JsonHttp.MAPPER.createObjectNode().put("registration", id)
            .put("name", job.name).put("jobId", job.jobId).put("jobFreed", freed));
    }

    /** {@code GET /v1/jobs}: every job for an operator, else the jobs whose secret the caller shows. */
    synchronized ObjectNode jobs(final Caller caller)
    {
        final ObjectNode answer = JsonHttp.MAPPER.createObjectNode();
        final ArrayNode list = answer.putArray("jobs");
        jobs.values().stream().filter(job -> allowed(job, caller)).forEach(job -> list.add(describe(job)));
        answer.put("poolSlots", slots.poolSlots()).put("freeSlots", slots.freeSlots());
        return answer;
    }

    /** {@code GET /v1/jobs/{name}}. */
    synchronized ObjectNode job(final String name, final Caller caller)
    {
        final ControlledJob job = known(name);
        authorize(job, caller, "see");
        return describe(job);
    }

    /** {@code DELETE /v1/jobs/{name}}: an operator frees a job now. */
    synchronized ObjectNode free(final String name, final Caller caller)
    {
        final ControlledJob job = known(name);
        authorize(job, caller, "free");
        free(job, caller.operator() ? "freed by an operator" : "freed by a holder of its secret");
        return JsonHttp.MAPPER.createObjectNode().put("name", name).put("jobId", job.jobId).put("freed", true);
    }

    /** Expires the leases past their deadline; returns how many ranks were lost. Run every fraction of a lease. */
    synchronized int sweep()
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
            endRegistration(jobs.get(registration.jobName), registration,
                "lost (no lease renewal for " + leaseMs + " ms)");
        }
        return expired.size();
    }

    synchronized int jobCount()
    {
        return jobs.size();
    }

    synchronized int freeSlots()
    {
        return slots.freeSlots();
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
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " admitted: " + job.world
            + " ranks, " + job.dtype + ", " + job.elements + " elements, slots " + job.slotBase + ".."
            + (job.slotBase + job.slots - 1) + " of " + job.lanes + " lanes on " + backend.describe());
        return job;
    }

    private int freeJobId()
    {
        final Set<Integer> used = new HashSet<>(foreignJobIds);
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
     * The next session for a job the switch may hold: past the switch's own number for it too. A software switch
     * starts a session by itself when a process rejoins with a new incarnation from a registered source without asking
     * the controller (a worker restarted by hand on its old port); a number the controller then issued could equal that
     * session, and the bypassing run's packets would count in the new one. Asking costs one call, on restarts only.
     */
    private int takeSessionAfterSwitch(final int jobId)
    {
        try
        {
            final JobProgram onSwitch = backend.installed().get(jobId);
            if (onSwitch != null && onSwitch.session() >= nextSession)
            {
                nextSession = onSwitch.session() % 0xFFFF + 1;
            }
        }
        catch (final RuntimeException ex)
        {
            // Unreachable now: programming it fails the same way and is retried; the journal's number stands.
        }
        return takeSession();
    }

    private int takeSession()
    {
        final int session = nextSession;
        nextSession = nextSession % 0xFFFF + 1; // 1..65535: 0 is a JOIN's "any session"
        return session;
    }

    /** Programs the switch once every rank of the current session registered. */
    private void tryStart(final ControlledJob job)
    {
        if (job.running || job.registered() < job.world)
        {
            return;
        }
        if (program(job, "session " + job.session))
        {
            job.running = true;
            journal(job);
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " running: all "
                + job.world + " ranks registered; " + backend.describe() + " admits only " + job.program().sources()
                .stream().map(JsonHttp::format).toList());
        }
    }

    /** Installs the job as it stands; false (logged) if the switch did not take it: a later poll tries again. */
    private boolean program(final ControlledJob job, final String why)
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
                + backend.describe() + " for " + why + ": " + ex.getMessage());
            job.switchError = ex.getMessage();
            return false;
        }
    }

    /** Ends one registration of {@code job} ({@code how}: finished or lost); frees the job if it was the last. */
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
            free(job, how.startsWith("lost") ? "its ranks vanished (leases expired)" : "all ranks finished");
            return true;
        }
        journal(job);
        return false;
    }

    private void free(final ControlledJob job, final String why)
    {
        jobs.remove(job.name);
        for (final Registration registration : job.ranks)
        {
            if (registration != null)
            {
                registrations.remove(registration.id);
            }
        }
        slots.free(job.slotBase);
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
        final ObjectNode record = JsonHttp.MAPPER.createObjectNode().put("type", "freed").put("name", job.name)
            .put("nextSession", nextSession);
        journal.append(record);
        final String how = removal;
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " freed: " + why + "; " + how
            + "; slots " + job.slotBase + ".." + (job.slotBase + job.slots - 1) + " returned");
        compactIfLong();
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

    private void journal(final ControlledJob job)
    {
        journal.append(record(job));
        compactIfLong();
    }

    private void compactIfLong()
    {
        if (journal.lines() > 256 + 4 * jobs.size())
        {
            journal.compact(snapshot());
        }
    }

    private List<ObjectNode> snapshot()
    {
        final List<ObjectNode> records = new ArrayList<>();
        jobs.values().forEach(job -> records.add(record(job)));
        if (records.isEmpty())
        {
            records.add(JsonHttp.MAPPER.createObjectNode().put("type", "freed").put("name", "")
                .put("nextSession", nextSession));
        }
        return records;
    }

    private ObjectNode record(final ControlledJob job)
    {
        final ObjectNode record = JsonHttp.MAPPER.createObjectNode();
        record.put("type", "job").put("nextSession", nextSession).put("name", job.name).put("jobId", job.jobId)
            .put("world", job.world).put("dtype", job.dtype).put("elements", job.elements)
            .put("slotBase", job.slotBase).put("slots", job.slots).put("lanes", job.lanes)
            .put("session", job.session).put("running", job.running).put("secretSha256", job.secretHash);
        final ArrayNode sources = record.putArray("sources");
        // each rank's JOIN credential as installed on the switch: the journal is the controller's own (secrets, as
        // the switch holds them; docs/security.md)
        final ArrayNode credentials = record.putArray("joinCredentials");
        final ArrayNode ranks = record.putArray("ranks");
        for (int rank = 0; rank < job.world; rank++)
        {
            credentials.add(JobSecret.formatCredential(job.lastCredential[rank]));
            if (job.lastSource[rank] == null)
            {
                sources.addNull();
            }
            else
            {
                sources.add(JsonHttp.format(job.lastSource[rank]));
            }
            final Registration registration = job.ranks[rank];
            if (registration == null)
            {
                ranks.addNull();
            }
            else
            {
                final ObjectNode r = ranks.addObject().put("id", registration.id)
                    .put("source", JsonHttp.format(registration.source)).put("session", registration.session)
                    .put("joinCredential", JobSecret.formatCredential(registration.joinCredential));
                if (registration.incarnation != null)
                {
                    r.put("incarnation", registration.incarnation);
                }
            }
        }
        return record;
    }

    /**
     * Rebuilds the state from the journal (every lease starts afresh), compacts it, then checks the switch: a running
     * job it lacks or holds otherwise (another session, other sources) is installed again; jobs it holds that the
     * controller did not install keep their ids and slot ranges (reserved).
     *
     * @return the number of jobs recovered.
     */
    synchronized int recover()
    {
        final Map<String, ObjectNode> last = new LinkedHashMap<>();
        for (final ObjectNode record : journal.replay())
        {
            nextSession = Math.max(nextSession, record.path("nextSession").asInt(1));
            final String name = record.path("name").asText();
            if ("freed".equals(record.path("type").asText()))
            {
                last.remove(name);
            }
            else
            {
                last.remove(name);
                last.put(name, record);
            }
        }
        final long now = clockMs.getAsLong();
        for (final ObjectNode record : last.values())
        {
            final ControlledJob job = new ControlledJob(record.path("name").asText(), record.path("jobId").asInt(),
                record.path("world").asInt(), record.path("dtype").asText(), record.path("elements").asLong(),
                record.path("slotBase").asInt(), record.path("slots").asInt(), record.path("lanes").asInt(),
                record.path("session").asInt(), record.hasNonNull("secretSha256")
                ? record.path("secretSha256").asText() : null);
            job.running = record.path("running").asBoolean();
            if (!slots.reserve(job.slotBase, job.slots, job.name))
            {
                LOGGER.log(System.Logger.Level.WARNING, () -> "controller: journal: " + job.describe() + "'s slots "
                    + job.slotBase + "+" + job.slots + " overlap another's or leave the pool; job dropped");
                continue;
            }
            final Iterator<JsonNode> sources = record.path("sources").iterator();
            final Iterator<JsonNode> ranks = record.path("ranks").iterator();
            final Iterator<JsonNode> credentials = record.path("joinCredentials").iterator();
            for (int rank = 0; rank < job.world && sources.hasNext() && ranks.hasNext(); rank++)
            {
                // a journal of before JOIN credentials: a fresh one, which no process knows yet (safe: not "none")
                job.lastCredential[rank] = credentials.hasNext()
                    ? JobSecret.parseCredential("joinCredentials", credentials.next().asText())
                    : JobSecret.joinCredential();
                final JsonNode source = sources.next();
                if (!source.isNull())
                {
                    job.lastSource[rank] = JsonHttp.address("sources", source.asText());
                }
                final JsonNode r = ranks.next();
                if (!r.isNull())
                {
                    // a journal of before JOIN credentials: a fresh one (the rank learns it at its next poll)
                    final Registration registration = new Registration(r.path("id").asText(), job.name, rank,
                        JsonHttp.address("source", r.path("source").asText()),
                        r.hasNonNull("incarnation") ? r.path("incarnation").asText() : null,
                        r.path("session").asInt(), now + leaseMs, r.hasNonNull("joinCredential")
                        ? JobSecret.parseCredential("joinCredential", r.path("joinCredential").asText())
                        : JobSecret.joinCredential());
                    job.ranks[rank] = registration;
                    job.lastCredential[rank] = registration.joinCredential;
                    registrations.put(registration.id, registration);
                }
            }
            jobs.put(job.name, job);
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " recovered from the journal"
                + " (" + (job.running ? "running" : "waiting") + ", " + job.registered() + " of " + job.world
                + " ranks registered; leases restart now)");
        }
        journal.compact(snapshot());
        recheckSwitch();
        return jobs.size();
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
                if (!program(job, "the check after a controller restart"))
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

    @Override
    public synchronized void close()
    {
        journal.close();
    }
}
