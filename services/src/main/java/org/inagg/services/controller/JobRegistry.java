package org.inagg.services.controller;

import java.util.function.LongSupplier;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;

/**
 * The controller's registry as its HTTP endpoints see it (docs/controller.md): each request runs the job lifecycle's
 * rule ({@link JobLifecycle}), brings the switch along outside the lock ({@link SwitchSync}), and is answered with a
 * status and a JSON body built here; a {@link Refusal} becomes the status its reason maps to, with its message.
 * <pre>
 * UNKNOWN 404   GONE 410   NOT_ALLOWED 403   MISMATCH 409   NO_ROOM 503   JOURNAL_DOWN 503
 * </pre>
 * The journal and recovery are {@link RegistryState} and {@link JobJournal}. Thread-safe, as its parts are.
 */
final class JobRegistry implements AutoCloseable
{
    private final SwitchBackend backend;
    private final JobLifecycle lifecycle;
    private final SwitchSync switches;

    JobRegistry(final SwitchBackend backend, final Journal journal, final SlotAllocator slots, final LongSupplier clockMs,
        final long leaseMs, final int lanes, final int defaultSlots, final boolean trustSources)
    {
        final RegistryState state = new RegistryState(new JobJournal(journal), slots, clockMs, leaseMs);
        this.backend = backend;
        this.lifecycle = new JobLifecycle(state, lanes, defaultSlots, new JobAccess(trustSources));
        this.switches = new SwitchSync(backend, state);
    }

    /** {@link #register(RegisterRequest, Caller)} by an operator (embedding code, tests). */
    JsonHttp.Answer register(final RegisterRequest request)
    {
        return register(request, Caller.embedded());
    }

    /**
     * {@code POST /v1/registrations}: 200 with the assignment once the job runs, 202 while ranks are missing. The first
     * registration of a job sets its secret (the caller's, or a new one in the answer's {@code jobSecret}).
     */
    JsonHttp.Answer register(final RegisterRequest request, final Caller caller)
    {
        return answering(() ->
        {
            int switchSession = JobLifecycle.NOT_ASKED;
            JobLifecycle.Joined joined = lifecycle.join(request, caller, switchSession);
            while (joined.askSessionOf() != 0)
            {
                switchSession = switches.sessionOf(joined.askSessionOf());
                joined = lifecycle.join(request, caller, switchSession);
            }
            switches.sync(joined.job(), true);
            return answer(lifecycle.status(joined.job(), joined.registration(), joined.newSecret()));
        });
    }

    /** {@code GET /v1/registrations/{id}}: as {@link #register}'s answer now; renews the lease. */
    JsonHttp.Answer status(final String id, final Caller caller)
    {
        return answering(() ->
        {
            final JobLifecycle.Joined polled = lifecycle.poll(id, caller);
            switches.sync(polled.job(), false);
            return answer(lifecycle.status(polled.job(), polled.registration(), null));
        });
    }

    /** {@code PUT /v1/registrations/{id}/lease}. */
    JsonHttp.Answer renew(final String id, final Caller caller)
    {
        return answering(() ->
        {
            final JobLifecycle.Renewed renewed = lifecycle.renew(id, caller);
            return new JsonHttp.Answer(200, JsonHttp.MAPPER.createObjectNode()
                .put("registration", renewed.registration()).put("name", renewed.name())
                .put("jobId", renewed.jobId()).put("session", renewed.session()).put("leaseMs", lifecycle.leaseMs()));
        });
    }

    /** {@code DELETE /v1/registrations/{id}}: the rank is done; the last one frees the job. */
    JsonHttp.Answer release(final String id, final Caller caller)
    {
        return answering(() ->
        {
            final JobLifecycle.Released released = lifecycle.release(id, caller);
            final ControlledJob job = released.job();
            if (released.retired())
            {
                switches.remove(job, "all ranks finished");
            }
            return new JsonHttp.Answer(200, JsonHttp.MAPPER.createObjectNode().put("registration", id)
                .put("name", job.name).put("jobId", job.jobId).put("jobFreed", released.retired()));
        });
    }

    /** {@code GET /v1/jobs}: every job for an operator, else the jobs whose secret the caller shows. */
    ObjectNode jobs(final Caller caller)
    {
        return answering(() ->
        {
            final JobStatus.Listing listing = lifecycle.jobs(caller);
            final ObjectNode answer = JsonHttp.MAPPER.createObjectNode();
            final ArrayNode list = answer.putArray("jobs");
            listing.jobs().forEach(job -> list.add(describe(job)));
            return answer.put("poolSlots", listing.poolSlots()).put("freeSlots", listing.freeSlots());
        });
    }

    /** {@code GET /v1/jobs/{name}}. */
    ObjectNode job(final String name, final Caller caller)
    {
        return answering(() -> describe(lifecycle.job(name, caller)));
    }

    /** {@code DELETE /v1/jobs/{name}}: an operator (or the job's owner) frees a job now. */
    ObjectNode free(final String name, final Caller caller)
    {
        return answering(() ->
        {
            final ControlledJob job = lifecycle.free(name, caller);
            switches.remove(job, caller.operator() ? "freed by an operator" : "freed by a holder of its secret");
            return JsonHttp.MAPPER.createObjectNode().put("name", name).put("jobId", job.jobId).put("freed", true);
        });
    }

    /** Expires the leases past their deadline; returns how many ranks were lost. Run every fraction of a lease. */
    int sweep()
    {
        final JobLifecycle.Swept swept = lifecycle.sweep();
        swept.retired().forEach(job -> switches.remove(job, "its ranks vanished (leases expired)"));
        return swept.lost();
    }

    /**
     * Rebuilds the state from the journal, then checks the switch (without the lock, as every switch call): see
     * {@link JobLifecycle#recover} and {@link SwitchSync#reconcile}. Runs before anything is served.
     *
     * @return the number of jobs recovered.
     */
    int recover()
    {
        final int recovered = lifecycle.recover();
        switches.reconcile();
        return recovered;
    }

    int jobCount()
    {
        return lifecycle.jobCount();
    }

    int freeSlots()
    {
        return lifecycle.freeSlots();
    }

    @Override
    public void close()
    {
        lifecycle.close();
    }

    private JsonHttp.Answer answer(final RankStatus status)
    {
        final ObjectNode body = JsonHttp.MAPPER.createObjectNode();
        body.put("registration", status.registration()).put("name", status.name()).put("jobId", status.jobId())
            .put("session", status.session()).put("world", status.world()).put("rank", status.rank())
            .put("leaseMs", lifecycle.leaseMs());
        final int code;
        if (status.ready())
        {
            // the rank's own JOIN credential: only this registration's answer carries it (docs/security.md)
            body.put("state", "ready").put("workerId", status.rank())
                .put("joinCredential", JobSecret.formatCredential(status.joinCredential()))
                .put("switch", JsonHttp.format(backend.dataAddress())).put("slots", status.slots())
                .put("slotBase", status.slotBase()).put("lanes", status.lanes()).put("dtype", status.dtype())
                .put("elements", status.elements());
            code = 200;
        }
        else
        {
            body.put("state", "waiting").put("registered", status.registered());
            final ArrayNode missing = body.putArray("missing");
            status.missing().forEach(missing::add);
            if (status.switchError() != null)
            {
                body.put("switchError", status.switchError());
            }
            code = 202;
        }
        if (status.newSecret() != null)
        {
            body.put("jobSecret", status.newSecret());
        }
        return new JsonHttp.Answer(code, body);
    }

    private static ObjectNode describe(final JobStatus job)
    {
        final ObjectNode node = JsonHttp.MAPPER.createObjectNode();
        node.put("name", job.name()).put("jobId", job.jobId()).put("session", job.session())
            .put("state", job.running() ? "running" : "waiting").put("world", job.world()).put("dtype", job.dtype())
            .put("elements", job.elements()).put("slotBase", job.slotBase()).put("slots", job.slots())
            .put("lanes", job.lanes()).put("registered", job.registered());
        final ArrayNode ranks = node.putArray("ranks");
        for (final JobStatus.RankLease rank : job.ranks())
        {
            if (rank == null)
            {
                ranks.addNull();
                continue;
            }
            ranks.addObject().put("rank", rank.rank()).put("source", JsonHttp.format(rank.source()))
                .put("session", rank.session()).put("leaseLeftMs", rank.leaseLeftMs());
        }
        return node;
    }

    /** Runs a request; a refusal is answered with its reason's status and its message. */
    private static <T> T answering(final Supplier<T> request)
    {
        try
        {
            return request.get();
        }
        catch (final Refusal refusal)
        {
            throw new HttpFailure(status(refusal.reason()), refusal.getMessage(), refusal.getCause());
        }
    }

    static int status(final Refusal.Reason reason)
    {
        return switch (reason)
        {
            case UNKNOWN -> HttpFailure.NOT_FOUND;
            case GONE -> HttpFailure.GONE;
            case NOT_ALLOWED -> HttpFailure.FORBIDDEN;
            case MISMATCH -> HttpFailure.CONFLICT;
            case NO_ROOM, JOURNAL_DOWN -> HttpFailure.UNAVAILABLE;
        };
    }
}
