package org.inagg.services.controller;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.ApiToken;
import org.inagg.services.http.JsonHttp;

/**
 * A rank's side of the controller (docs/controller.md): finds the switch, registers the rank's UDP source, waits
 * (bounded) for every rank of the job, renews the lease on a daemon thread every third of it, and deletes the
 * registration on {@link #close()}. Every call is bounded by the call timeout; waiting is bounded by the caller's.
 */
public final class ControllerClient implements AutoCloseable
{
    /** The environment variable a worker reads when {@code --controller} is not given. */
    public static final String ENV = "INAGG_CONTROLLER";
    private static final System.Logger LOGGER = System.getLogger(ControllerClient.class.getName());
    private static final long POLL_MS = 50;

    private final URI base;
    private final Duration callTimeout;
    private final HttpClient client;
    private final ApiToken token;
    private final String incarnation = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    /** The job's secret: given (or from {@link JobSecret#ENV}), else the one the job's first registration returned. */
    private volatile String jobSecret;
    private volatile Assignment assignment;
    private volatile String leaseFailure;
    private Thread renewer;
    private volatile boolean closed;

    /** A client presenting the token of {@link ApiToken#ENV} and the job secret of {@code INAGG_JOB_SECRET}, if set. */
    public ControllerClient(final String url, final Duration callTimeout)
    {
        this(url, callTimeout, ApiToken.fromEnvironment(System.getenv()), jobSecretFromEnvironment());
    }

    public ControllerClient(final String url, final Duration callTimeout, final ApiToken token)
    {
        this(url, callTimeout, token, null);
    }

    /**
     * @param jobSecret the secret the ranks of the job share (16..128 of [A-Za-z0-9_-]), or null: the first rank then
     *                  gets one from the controller, and the job's other ranks are refused unless they show it.
     */
    public ControllerClient(final String url, final Duration callTimeout, final ApiToken token, final String jobSecret)
    {
        if (jobSecret != null)
        {
            try
            {
                JobSecret.requireWellFormed(jobSecret);
            }
            catch (final org.inagg.services.http.HttpFailure ex)
            {
                throw new IllegalArgumentException("job secret: " + ex.getMessage());
            }
        }
        this.jobSecret = jobSecret;
        final String trimmed = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        this.base = URI.create(trimmed.contains("://") ? trimmed : "http://" + trimmed);
        this.callTimeout = callTimeout;
        this.token = token;
        this.client = HttpClient.newBuilder().connectTimeout(callTimeout).build();
    }

    /** {@code INAGG_JOB_SECRET}, or null if unset; set but empty is an error. */
    static String jobSecretFromEnvironment()
    {
        final String value = System.getenv(JobSecret.ENV);
        if (value != null && value.isBlank())
        {
            throw new IllegalArgumentException(JobSecret.ENV + " is set but empty: unset it, or give the job's secret");
        }
        if (value == null)
        {
            return null;
        }
        try
        {
            return JobSecret.requireWellFormed(value.strip());
        }
        catch (final org.inagg.services.http.HttpFailure ex)
        {
            throw new IllegalArgumentException(JobSecret.ENV + ": " + ex.getMessage());
        }
    }

    /** The job's secret this client shows: given, or learnt from the job's first registration; null before. */
    public String jobSecret()
    {
        return jobSecret;
    }

    /** The controller's URL. */
    public URI url()
    {
        return base;
    }

    /** Where the controller's switch takes packets ({@code GET /v1/info}). */
    public InetSocketAddress switchAddress()
    {
        final JsonNode info = call("GET", "/v1/info", null, "asking for the switch's address").body();
        return JsonHttp.address("switch", info.path("switch").asText());
    }

    /**
     * The address a socket bound to {@code bound} sends to {@code destination} from: {@code bound}'s own, or where it is
     * a wildcard, the local address the kernel routes toward {@code destination}.
     */
    public static InetAddress sourceToward(final InetSocketAddress bound, final InetSocketAddress destination)
    {
        if (!bound.getAddress().isAnyLocalAddress())
        {
            return bound.getAddress();
        }
        try (DatagramSocket probe = new DatagramSocket())
        {
            probe.connect(destination);
            return probe.getLocalAddress();
        }
        catch (final IOException ex)
        {
            throw new ControllerException("no route toward the switch at " + destination + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Registers this rank and waits until every rank of the job registered and the controller programmed the switch;
     * then renews the lease on a daemon thread until {@link #close()}.
     *
     * @param slots slots to ask for, or 0 for the controller's choice.
     * @throws ControllerException refused (the controller's reason: world size mismatch, no free slots ...), not
     *                             answering, or the job not started within {@code wait}: "3 of 4 ranks registered for
     *                             job 'run-42' after 30 s; missing ranks 2".
     */
    public Assignment register(final String name, final int rank, final int world, final String dtype,
        final long elements, final InetSocketAddress source, final int slots, final Duration wait)
    {
        if (assignment != null || renewer != null)
        {
            throw new IllegalStateException("this client registered already");
        }
        final ObjectNode body = JsonHttp.MAPPER.createObjectNode();
        body.put("name", name).put("rank", rank).put("world", world).put("dtype", dtype).put("elements", elements)
            .put("host", source.getAddress().getHostAddress()).put("port", source.getPort())
            .put("incarnation", incarnation);
        if (slots > 0)
        {
            body.put("slots", slots);
        }
        final long deadline = System.nanoTime() + wait.toNanos();
        JsonHttp.Answer answer = call("POST", "/v1/registrations", body, "registering rank " + rank + " of job '"
            + name + "'");
        if (answer.body().hasNonNull("jobSecret"))
        {
            jobSecret = answer.body().path("jobSecret").asText();
        }
        final String id = answer.body().path("registration").asText();
        while (answer.status() == 202)
        {
            if (System.nanoTime() - deadline > 0)
            {
                final JsonNode waiting = answer.body();
                final List<String> missing = new ArrayList<>();
                waiting.path("missing").forEach(m -> missing.add(m.asText()));
                delete(id);
                throw new ControllerException(408, waiting.path("registered").asInt() + " of " + world
                    + " ranks registered for job '" + name + "' after " + seconds(wait) + "; missing rank"
                    + (missing.size() == 1 ? " " : "s ") + String.join(", ", missing)
                    + (waiting.hasNonNull("switchError") ? "; the switch: " + waiting.path("switchError").asText()
                    : "") + " (controller " + base + ")");
            }
            sleep(POLL_MS);
            answer = call("GET", "/v1/registrations/" + id, null, "waiting for the ranks of job '" + name + "'");
        }
        final JsonNode ready = answer.body();
        final Assignment assigned = new Assignment(id, name, ready.path("jobId").asInt(),
            ready.path("workerId").asInt(), ready.path("world").asInt(),
            JsonHttp.address("switch", ready.path("switch").asText()), ready.path("session").asInt(),
            ready.path("slots").asInt(), ready.path("lanes").asInt(), ready.path("leaseMs").asLong(),
            ready.hasNonNull("joinCredential")
            ? JobSecret.parseCredential("joinCredential", ready.path("joinCredential").asText())
            : org.inagg.wire.InaggHeader.NO_CREDENTIAL);
        assignment = assigned;
        renewer = Thread.ofPlatform().daemon().name("inagg-lease-" + name + "-" + rank).start(this::renewLoop);
        return assigned;
    }

    /** Why the lease could not be renewed (the job moved to another session, the controller freed it), or null. */
    public String leaseFailure()
    {
        return leaseFailure;
    }

    /** Stops renewing the lease without deleting the registration, as a killed process would (tests). */
    void stopRenewing()
    {
        closed = true;
        if (renewer != null)
        {
            renewer.interrupt();
        }
        assignment = null;
    }

    /** Stops renewing and deletes the registration (the last rank to do so frees the job). Bounded; never throws. */
    @Override
    public void close()
    {
        closed = true;
        if (renewer != null)
        {
            renewer.interrupt();
            try
            {
                renewer.join(callTimeout.toMillis() + 1000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        final Assignment assigned = assignment;
        if (assigned != null)
        {
            delete(assigned.registration());
        }
        client.close();
    }

    private void renewLoop()
    {
        final Assignment assigned = assignment;
        final long period = Math.max(10, assigned.leaseMs() / 3);
        while (!closed)
        {
            try
            {
                Thread.sleep(period);
            }
            catch (final InterruptedException ex)
            {
                return;
            }
            try
            {
                final JsonHttp.Answer answer = JsonHttp.call(client, "PUT",
                    base.resolve("/v1/registrations/" + assigned.registration() + "/lease"), null, callTimeout, token,
                    secretHeader());
                if (answer.status() == 410 || answer.status() == 404)
                {
                    leaseFailure = answer.describe();
                    LOGGER.log(System.Logger.Level.WARNING, () -> "job '" + assigned.name() + "' rank "
                        + assigned.workerId() + ": lease not renewed: " + leaseFailure);
                    return;
                }
            }
            catch (final IOException ex)
            {
                // The controller may be restarting: keep trying until the lease would have run out many times over.
                LOGGER.log(System.Logger.Level.DEBUG, () -> "lease renewal failed: " + ex.getMessage());
            }
        }
    }

    private void delete(final String id)
    {
        try
        {
            JsonHttp.call(client, "DELETE", base.resolve("/v1/registrations/" + id), null, callTimeout, token,
                secretHeader());
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "could not delete registration " + id + " at " + base
                + " (its lease will run out): " + ex.getMessage());
        }
    }

    private JsonHttp.Answer call(final String method, final String path, final JsonNode body, final String what)
    {
        final JsonHttp.Answer answer;
        try
        {
            answer = JsonHttp.call(client, method, base.resolve(path), body, callTimeout, token, secretHeader());
        }
        catch (final IOException ex)
        {
            throw new ControllerException("controller " + base + " unreachable while " + what + ": "
                + ex.getMessage(), ex);
        }
        if (!answer.ok())
        {
            throw new ControllerException(answer.status(), "controller " + base + " refused " + what + " ("
                + answer.status() + "): " + answer.describe());
        }
        return answer;
    }

    private java.util.Map<String, String> secretHeader()
    {
        final String secret = jobSecret;
        return secret == null ? java.util.Map.of() : java.util.Map.of(JobSecret.HEADER, secret);
    }

    private static String seconds(final Duration wait)
    {
        return wait.toMillis() % 1000 == 0 ? wait.toSeconds() + " s" : wait.toMillis() + " ms";
    }

    private static void sleep(final long ms)
    {
        try
        {
            TimeUnit.MILLISECONDS.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new ControllerException("interrupted while waiting for the controller", ex);
        }
    }
}
