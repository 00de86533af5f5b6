package org.inagg.services.controller;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.inagg.services.http.ApiToken;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.HttpServers;
import org.inagg.services.http.JsonHttp;

/**
 * The controller service: {@link JobRegistry} behind HTTP+JSON (docs/controller.md), a lease sweeper, and the
 * journal. {@link #launch} starts it embedded (tests, other services); {@code inagg controller} runs it standalone.
 *
 * <pre>
 * GET    /v1/info                        the switch workers send to, lease, pool
 * POST   /v1/registrations               a rank registers: 200 ready (assignment) or 202 waiting
 * GET    /v1/registrations/{id}          as POST's answer now (renews the lease); 410 if replaced or stale
 * PUT    /v1/registrations/{id}/lease    renews the lease
 * DELETE /v1/registrations/{id}          the rank is done; the last one frees the job
 * GET    /v1/jobs, /v1/jobs/{name}       the jobs; DELETE /v1/jobs/{name} frees one
 * POST   /v1/plans                       GRID / InArt plan with path-aware multicast for a posted topology
 * </pre>
 * Who may do what: the cluster token (if set) lets a request in; a job's secret ({@code X-Inagg-Job-Secret}) is needed
 * for anything on that job once it exists; the operator's token may do everything ({@link JobAccess}, issue 24).
 */
public final class Controller implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(Controller.class.getName());
    /** Threads serving HTTP: requests are short (the registry is one lock); a plan takes one for seconds. */
    static final int HTTP_THREADS = 8;
    static final int HTTP_QUEUE = 256;

    private final ControllerContext ctx;
    private final JobRegistry registry;
    private final HttpServer server;
    private final ScheduledExecutorService sweeper;
    private final PlanService plans;

    private Controller(final ControllerContext ctx)
    {
        this.ctx = ctx;
        final SlotAllocator slots = new SlotAllocator(ctx.poolSlots());
        if (ctx.esaPoolSlots() > 0 && !slots.reserve(ctx.esaPoolBase(), ctx.esaPoolSlots(), "the ESA pool"))
        {
            throw new IllegalArgumentException("controller: the ESA pool " + ctx.esaPoolBase() + "+"
                + ctx.esaPoolSlots() + " does not fit the pool of " + ctx.poolSlots() + " slots");
        }
        this.registry = new JobRegistry(ctx.switchBackend(), Journal.open(ctx.journal()), slots, ctx.clockMs(),
            ctx.leaseMs(), ctx.lanes(), ctx.defaultSlots(), ctx.trustSources());
        final int recovered = registry.recover();
        this.plans = new PlanService(ctx.planTimeoutMs());
        try
        {
            server = HttpServers.create(ctx.bind(), HTTP_THREADS, HTTP_QUEUE, "inagg-controller-http");
        }
        catch (final IOException ex)
        {
            registry.close();
            plans.close();
            throw new UncheckedIOException("controller: cannot listen on " + ctx.bind() + ": " + ex.getMessage(), ex);
        }
        server.createContext("/v1/", exchange -> JsonHttp.handle(exchange, ApiToken.NONE, this::authorizeAndRoute));
        server.start();
        sweeper = Executors.newSingleThreadScheduledExecutor(r ->
        {
            final Thread thread = new Thread(r, "inagg-controller-leases");
            thread.setDaemon(true);
            return thread;
        });
        sweeper.scheduleWithFixedDelay(this::sweep, ctx.sweepMs(), ctx.sweepMs(), TimeUnit.MILLISECONDS);
        LOGGER.log(System.Logger.Level.INFO, () -> "controller listening on http://" + address().getHostString() + ":"
            + address().getPort() + ", programming " + ctx.switchBackend().describe() + ", journal " + ctx.journal()
            + " (" + recovered + " jobs recovered), leases of " + ctx.leaseMs() + " ms, pool of " + ctx.poolSlots()
            + " slots" + (ctx.esaPoolSlots() > 0 ? " (ESA pool " + ctx.esaPoolBase() + "+" + ctx.esaPoolSlots()
            + " reserved)" : ""));
    }

    /** Starts a controller (embedded): the context is concluded here. */
    public static Controller launch(final ControllerContext ctx)
    {
        return new Controller(ctx.conclude());
    }

    /** Where the controller listens. */
    public InetSocketAddress address()
    {
        return server.getAddress();
    }

    /** {@code http://host:port} of this controller, for clients. */
    public String url()
    {
        final InetSocketAddress address = address();
        final String host = address.getAddress().isAnyLocalAddress() ? "127.0.0.1"
            : address.getAddress().getHostAddress();
        return "http://" + host + ":" + address.getPort();
    }

    public ControllerContext context()
    {
        return ctx;
    }

    /** Jobs known now (tests, stats). */
    public int jobCount()
    {
        return registry.jobCount();
    }

    /** Free slots of the pool now. */
    public int freeSlots()
    {
        return registry.freeSlots();
    }

    /** Stops serving; the journal keeps the state for the next start. The switch backend is the caller's to close. */
    @Override
    public void close()
    {
        HttpServers.stop(server);
        sweeper.shutdownNow();
        plans.close();
        registry.close();
        LOGGER.log(System.Logger.Level.INFO, () -> "controller stopped (state kept in " + ctx.journal() + ")");
    }

    private void sweep()
    {
        try
        {
            registry.sweep();
        }
        catch (final RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: lease sweep failed: " + ex);
        }
    }

    /**
     * The operator's token lets a request do anything; otherwise the cluster token (if one is set) must be there, and
     * what the request may touch is decided by the job secret it shows ({@link JobAccess}).
     */
    private void authorizeAndRoute(final HttpExchange exchange) throws IOException
    {
        final boolean operator = ctx.operatorToken().presentedBy(exchange);
        if (!operator)
        {
            ctx.token().check(exchange);
        }
        final String secret = exchange.getRequestHeaders().getFirst(JobSecret.HEADER);
        route(exchange, new Caller(operator, secret == null ? null : JobSecret.requireWellFormed(secret),
            exchange.getRemoteAddress().getAddress()));
    }

    private void route(final HttpExchange exchange, final Caller caller) throws IOException
    {
        final String path = exchange.getRequestURI().getPath();
        final String method = exchange.getRequestMethod();
        final String[] parts = path.substring(1).split("/", -1);
        if (parts.length >= 2 && parts[1].equals("info") && parts.length == 2)
        {
            requireMethod(method, path, "GET");
            final ObjectNode info = JsonHttp.MAPPER.createObjectNode();
            info.put("switch", JsonHttp.format(ctx.switchBackend().dataAddress()))
                .put("describe", ctx.switchBackend().describe()).put("leaseMs", ctx.leaseMs())
                .put("poolSlots", ctx.poolSlots()).put("lanes", ctx.lanes());
            JsonHttp.answer(exchange, 200, info);
            return;
        }
        if (parts.length >= 2 && parts[1].equals("registrations"))
        {
            registrations(exchange, method, path, parts, caller);
            return;
        }
        if (parts.length >= 2 && parts[1].equals("jobs"))
        {
            if (parts.length == 2 || parts.length == 3 && parts[2].isEmpty())
            {
                requireMethod(method, path, "GET");
                JsonHttp.answer(exchange, 200, registry.jobs(caller));
                return;
            }
            if (parts.length == 3)
            {
                final String name = RegisterRequest.requireName(parts[2]);
                requireMethod(method, path, "GET", "DELETE");
                JsonHttp.answer(exchange, 200, method.equals("GET") ? registry.job(name, caller)
                    : registry.free(name, caller));
                return;
            }
        }
        if (parts.length == 2 && parts[1].equals("plans"))
        {
            requireMethod(method, path, "POST");
            JsonHttp.answer(exchange, 200, plans.plan(JsonHttp.body(exchange)));
            return;
        }
        throw new HttpFailure(HttpFailure.NOT_FOUND, "no such endpoint: " + method + " " + path
            + " (docs/controller.md lists them)");
    }

    private void registrations(final HttpExchange exchange, final String method, final String path,
        final String[] parts, final Caller caller) throws IOException
    {
        if (parts.length == 2)
        {
            requireMethod(method, path, "POST");
            final JsonHttp.Answer answer = registry.register(RegisterRequest.parse(JsonHttp.body(exchange)), caller);
            JsonHttp.answer(exchange, answer.status(), answer.body());
            return;
        }
        final String id = parts[2];
        if (parts.length == 3)
        {
            requireMethod(method, path, "GET", "DELETE");
            final JsonHttp.Answer answer = method.equals("GET") ? registry.status(id, caller)
                : registry.release(id, caller);
            JsonHttp.answer(exchange, answer.status(), answer.body());
            return;
        }
        if (parts.length == 4 && parts[3].equals("lease"))
        {
            requireMethod(method, path, "PUT");
            final JsonHttp.Answer answer = registry.renew(id, caller);
            JsonHttp.answer(exchange, answer.status(), answer.body());
            return;
        }
        throw new HttpFailure(HttpFailure.NOT_FOUND, "no such endpoint: " + method + " " + path);
    }

    private static void requireMethod(final String method, final String path, final String... allowed)
    {
        for (final String one : allowed)
        {
            if (one.equals(method))
            {
                return;
            }
        }
        throw new HttpFailure(405, method + " " + path + ": allowed " + String.join(", ", allowed));
    }
}
