package org.inagg.services.switchcontrol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.HttpServers;
import org.inagg.services.http.JsonHttp;
import org.inagg.transport.ReusePortSteering;
import org.inagg.transport.SourceRegistry;
import org.inagg.wire.InaggHeader;

/**
 * The control port of a software switch on UDP or DPDK: jobs added, replaced (a new session) and removed over
 * HTTP+JSON, each worker's source given as {@code ip:port} and registered as a transport peer inside the switch
 * process ({@link SourceRegistry}), so that the switch admits only those sources (over DPDK, only from the MAC each
 * source's first accepted JOIN pins).
 * <p>
 * The HTTP threads never touch the switch or its transport: each request is queued and carried out by this agent's
 * {@link #doWork()}, which must run on the switch's agent thread (compose it with the {@link SoftwareSwitch} in one
 * {@code CompositeAgent}): {@link SourceRegistry#addPeer} is not thread-safe. A request waits for that at most
 * {@link #APPLY_TIMEOUT_MS} ms, then fails with 503 naming the agent. A sharded switch ({@code inagg switch --shards})
 * gives every shard's switch and transport ({@link Context#shards}): a job's requests are queued to the agent of its
 * shard ({@link #agent(int)}, job id % shards, where the kernel steers the job's datagrams), and the list of jobs asks
 * every shard in turn.
 *
 * <pre>
 * GET    /v1/jobs        {"data": "127.0.0.1:9000", "defaultLanes": 363, "jobs": [{"jobId": 3, "workers": 2, ...}]}
 * PUT    /v1/jobs/{id}   {"workers": 2, "slots": 16, "lanes": 256, "slotBase": 0, "session": 1,
 *                         "sources": ["127.0.0.1:40001", "127.0.0.1:40002"],
 *                         "joinCredentials": ["0123456789abcdef", "fedcba9876543210"]}  (200: the job as installed,
 *                         never its credentials; the body is checked by {@link JobRequest})
 * DELETE /v1/jobs/{id}   (200 {"jobId": 3, "removed": true}; 404 if not installed)
 * </pre>
 */
public final class SwitchControlServer implements Agent, AutoCloseable
{
    public static final long APPLY_TIMEOUT_MS = 5_000;
    private static final System.Logger LOGGER = System.getLogger(SwitchControlServer.class.getName());
    /** Threads serving the control port: one controller calls it, rarely; the rest is slack for idle connections. */
    static final int HTTP_THREADS = 4;

    /** Settings: the switch (or its shards), its transport's sources, where to listen. */
    public static final class Context
    {
        private List<SoftwareSwitch> switches = List.of();
        private List<SourceRegistry> transports = List.of();
        private InetSocketAddress bind;
        private InetSocketAddress dataAddress;
        private int defaultLanes = SwitchJobConfig.DEFAULT_LANES;
        private org.inagg.services.http.ApiToken token = org.inagg.services.http.ApiToken.NONE;

        /** The token the controller must present (default: none, open to anyone who reaches the port). */
        public Context token(final org.inagg.services.http.ApiToken token)
        {
            this.token = java.util.Objects.requireNonNull(token, "token");
            return this;
        }

        public Context softwareSwitch(final SoftwareSwitch softwareSwitch)
        {
            this.switches = List.of(Objects.requireNonNull(softwareSwitch, "softwareSwitch"));
            return this;
        }

        /** The switch's transport (UDP or DPDK): sources are registered as its peers. */
        public Context transport(final SourceRegistry transport)
        {
            this.transports = List.of(Objects.requireNonNull(transport, "transport"));
            return this;
        }

        /** A sharded switch: shard i's switch and transport, job j's on shard j % shards. */
        public Context shards(final List<SoftwareSwitch> switches, final List<SourceRegistry> transports)
        {
            this.switches = List.copyOf(switches);
            this.transports = List.copyOf(transports);
            return this;
        }

        /** Where the control port listens (port 0: a free one). */
        public Context bind(final InetSocketAddress bind)
        {
            this.bind = bind;
            return this;
        }

        /** The data address reported to controllers (default: the transport's local address). */
        public Context dataAddress(final InetSocketAddress dataAddress)
        {
            this.dataAddress = dataAddress;
            return this;
        }

        /**
         * Lanes per packet this switch gives a job that names none (default {@value SwitchJobConfig#DEFAULT_LANES}):
         * reported to controllers, which size their jobs' packets by it ({@code inagg controller} without
         * {@code --lanes}).
         */
        public Context defaultLanes(final int defaultLanes)
        {
            if (defaultLanes < 1 || defaultLanes > InaggHeader.MAX_ELEMENTS_FOR_1500_MTU)
            {
                throw new IllegalArgumentException("switch control: default lanes must be in 1.."
                    + InaggHeader.MAX_ELEMENTS_FOR_1500_MTU + ", got " + defaultLanes);
            }
            this.defaultLanes = defaultLanes;
            return this;
        }

        public Context conclude()
        {
            if (switches.isEmpty() || switches.size() != transports.size())
            {
                throw new IllegalStateException("switch control: softwareSwitch and transport are required, one of "
                    + "each per shard (got " + switches.size() + " switches and " + transports.size()
                    + " transports)");
            }
            if (bind == null)
            {
                throw new IllegalStateException("switch control: bind address is required");
            }
            if (dataAddress == null)
            {
                dataAddress = transports.get(0).localAddress();
            }
            return this;
        }
    }

    /** One shard's switch, transport, and the requests its agent thread carries out. */
    private static final class Shard implements Agent
    {
        private final SoftwareSwitch softwareSwitch;
        private final SourceRegistry transport;
        private final ManyToOneConcurrentArrayQueue<Runnable> requests = new ManyToOneConcurrentArrayQueue<>(256);
        private final String roleName;

        Shard(final SoftwareSwitch softwareSwitch, final SourceRegistry transport, final String roleName)
        {
            this.softwareSwitch = softwareSwitch;
            this.transport = transport;
            this.roleName = roleName;
        }

        @Override
        public String roleName()
        {
            return roleName;
        }

        @Override
        public int doWork()
        {
            int work = 0;
            Runnable request;
            while ((request = requests.poll()) != null)
            {
                request.run();
                work++;
            }
            return work;
        }
    }

    private final Context ctx;
    private final HttpServer server;
    private final List<Shard> shards;

    private SwitchControlServer(final Context ctx)
    {
        this.ctx = ctx;
        final List<Shard> built = new ArrayList<>();
        for (int i = 0; i < ctx.switches.size(); i++)
        {
            built.add(new Shard(ctx.switches.get(i), ctx.transports.get(i),
                ctx.switches.size() == 1 ? "inagg-switch-control" : "inagg-switch-control-shard-" + i));
        }
        this.shards = List.copyOf(built);
        try
        {
            server = HttpServers.create(ctx.bind, HTTP_THREADS, 64, "inagg-switch-control");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("switch control: cannot listen on " + ctx.bind + ": " + ex.getMessage(), ex);
        }
        server.createContext("/v1/jobs", exchange -> JsonHttp.handle(exchange, ctx.token, this::jobs));
        server.start();
        LOGGER.log(System.Logger.Level.INFO, () -> "switch control listening on http://" + address().getHostString()
            + ":" + address().getPort() + " for the switch at " + JsonHttp.format(ctx.dataAddress));
    }

    /**
     * Starts the control port; run {@link #doWork()} on the switch's agent thread from now on. A sharded switch runs
     * each shard's {@link #agent(int)} on that shard's thread instead: {@link #doWork()} carries out shard 0's requests
     * only, and the other shards' would wait in vain.
     */
    public static SwitchControlServer launch(final Context ctx)
    {
        return new SwitchControlServer(ctx.conclude());
    }

    /** The address the control port listens on. */
    public InetSocketAddress address()
    {
        return server.getAddress();
    }

    /** What shard {@code shard}'s agent thread runs beside its switch (shard 0's is this server's own doWork). */
    public Agent agent(final int shard)
    {
        return shards.get(shard);
    }

    @Override
    public String roleName()
    {
        return shards.get(0).roleName();
    }

    /** Shard 0's requests (the only shard of an unsharded switch). */
    @Override
    public int doWork()
    {
        return shards.get(0).doWork();
    }

    private Shard shardOf(final int jobId)
    {
        return shards.get(ReusePortSteering.shardOf(jobId, shards.size()));
    }

    @Override
    public void close()
    {
        HttpServers.stop(server);
    }

    private void jobs(final HttpExchange exchange) throws IOException
    {
        final String path = exchange.getRequestURI().getPath();
        final String method = exchange.getRequestMethod();
        final String rest = path.length() > "/v1/jobs".length() ? path.substring("/v1/jobs/".length()) : "";
        if (rest.isEmpty())
        {
            if (!method.equals("GET"))
            {
                throw new HttpFailure(405, method + " /v1/jobs: only GET");
            }
            JsonHttp.answer(exchange, 200, describeJobs());
            return;
        }
        final int jobId;
        try
        {
            jobId = Integer.parseInt(rest);
        }
        catch (final NumberFormatException ex)
        {
            throw new HttpFailure(HttpFailure.NOT_FOUND, "no such path " + path + " (job ids are numbers)");
        }
        if (jobId < 0 || jobId > InaggHeader.MAX_JOB_ID)
        {
            throw HttpFailure.badRequest("job id must be in 0.." + InaggHeader.MAX_JOB_ID + ", got " + jobId);
        }
        final Shard shard = shardOf(jobId);
        switch (method)
        {
            case "PUT" ->
            {
                final JobRequest job = JobRequest.parse(JsonHttp.body(exchange));
                JsonHttp.answer(exchange, 200, onAgent(shard, () -> install(shard, jobId, job)));
            }
            case "DELETE" ->
            {
                final JsonNode answer = onAgent(shard, () ->
                {
                    final SwitchJobConfig removed = shard.softwareSwitch.jobs().get(jobId);
                    if (!shard.softwareSwitch.removeJob(jobId))
                    {
                        throw new HttpFailure(HttpFailure.NOT_FOUND, "job " + jobId + " is not on this switch");
                    }
                    releasePeers(shard, removed);
                    LOGGER.log(System.Logger.Level.INFO, () -> "switch control: job " + jobId + " removed");
                    return JsonHttp.MAPPER.createObjectNode().put("jobId", jobId).put("removed", true);
                });
                JsonHttp.answer(exchange, 200, answer);
            }
            case "GET" ->
            {
                final JsonNode answer = onAgent(shard, () ->
                {
                    final SwitchJobConfig config = shard.softwareSwitch.jobs().get(jobId);
                    if (config == null)
                    {
                        throw new HttpFailure(HttpFailure.NOT_FOUND, "job " + jobId + " is not on this switch");
                    }
                    return describe(shard, config);
                });
                JsonHttp.answer(exchange, 200, answer);
            }
            default -> throw new HttpFailure(405, method + " " + path + ": only GET, PUT and DELETE");
        }
    }

    /** On the shard's agent thread. */
    private JsonNode install(final Shard shard, final int jobId, final JobRequest job)
    {
        final int workers = job.workers();
        final List<InetSocketAddress> sources = job.sources();
        final int[] peers = new int[workers];
        java.util.Arrays.fill(peers, -1);
        for (int w = 0; w < workers; w++)
        {
            peers[w] = shard.transport.addPeer(sources.get(w));
            if (peers[w] < 0)
            {
                releaseUnused(shard, peers);
                throw new HttpFailure(HttpFailure.UNAVAILABLE, "the switch's peer table is full (--max-peers); cannot"
                    + " register source " + JsonHttp.format(sources.get(w)) + " of worker " + w);
            }
        }
        final SwitchJobConfig previous = shard.softwareSwitch.jobs().get(jobId);
        final SwitchJobConfig config;
        try
        {
            config = job.config(jobId, peers);
            shard.softwareSwitch.addJob(config);
        }
        catch (final IllegalArgumentException ex)
        {
            releaseUnused(shard, peers);
            throw new HttpFailure(HttpFailure.CONFLICT, ex.getMessage());
        }
        // A new session may come with a restarted rank's new port: the old one is nobody's source any more.
        releasePeers(shard, previous);
        LOGGER.log(System.Logger.Level.INFO, () -> "switch control: job " + jobId + " installed in session "
            + job.session() + " (" + workers + " workers, slots " + job.slotBase() + "+" + job.slots() + " of "
            + job.lanes() + " lanes, sources " + sources.stream().map(JsonHttp::format).toList()
            + (config.credentialsRequired() ? ", JOIN credentials required" : ", no JOIN credentials") + ")");
        return describe(shard, config);
    }

    /** On the shard's agent thread: forgets the sources of {@code job} (null: none) that no installed job registers. */
    private static void releasePeers(final Shard shard, final SwitchJobConfig job)
    {
        if (job != null && job.registeredSources())
        {
            releaseUnused(shard, job.workerPeers());
        }
    }

    /**
     * On the shard's agent thread: removes each of {@code peers} from its transport unless a job installed there
     * registers it, so that jobs coming and going never fill the switch's peer table (--max-peers).
     */
    private static void releaseUnused(final Shard shard, final int[] peers)
    {
        final java.util.BitSet inUse = new java.util.BitSet();
        for (final SwitchJobConfig installed : shard.softwareSwitch.jobs().values())
        {
            if (installed.registeredSources())
            {
                for (final int peer : installed.workerPeers())
                {
                    inUse.set(peer);
                }
            }
        }
        for (final int peer : peers)
        {
            if (peer >= 0 && !inUse.get(peer))
            {
                shard.transport.removePeer(peer);
            }
        }
    }

    /**
     * Every shard's jobs, each described on its shard's agent thread, by job id: asked of every shard at once and
     * awaited within one {@link #APPLY_TIMEOUT_MS} (an idle shard takes up to its idle wait to look).
     */
    private JsonNode describeJobs()
    {
        final List<CompletableFuture<JsonNode>> asked = new ArrayList<>();
        for (final Shard shard : shards)
        {
            asked.add(submit(shard, () ->
            {
                final ArrayNode jobs = JsonHttp.MAPPER.createArrayNode();
                for (final SwitchJobConfig config : new TreeMap<>(shard.softwareSwitch.jobs()).values())
                {
                    jobs.add(describe(shard, config));
                }
                return jobs;
            }));
        }
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(APPLY_TIMEOUT_MS);
        final TreeMap<Integer, JsonNode> byId = new TreeMap<>();
        for (int i = 0; i < shards.size(); i++)
        {
            await(asked.get(i), shards.get(i), deadlineNs).forEach(job -> byId.put(job.get("jobId").asInt(), job));
        }
        final ObjectNode answer = JsonHttp.MAPPER.createObjectNode();
        answer.put("data", JsonHttp.format(ctx.dataAddress)).put("defaultLanes", ctx.defaultLanes);
        answer.putArray("jobs").addAll(byId.values());
        return answer;
    }

    /** On the shard's agent thread. */
    private static ObjectNode describe(final Shard shard, final SwitchJobConfig config)
    {
        final ObjectNode job = JsonHttp.MAPPER.createObjectNode();
        job.put("jobId", config.jobId()).put("workers", config.workers()).put("slots", config.slots())
            .put("lanes", config.lanesPerPacket()).put("slotBase", config.slotBase())
            // The current session: the installed one, or a later one the switch started on a rejoin.
            .put("session", shard.softwareSwitch.session(config.jobId()));
        if (config.registeredSources())
        {
            final ArrayNode sources = job.putArray("sources");
            for (final int peer : config.workerPeers())
            {
                final InetSocketAddress address = shard.transport.peerAddress(peer);
                sources.add(address == null ? "peer " + peer : JsonHttp.format(address));
            }
        }
        else
        {
            job.putNull("sources");
        }
        return job;
    }

    /** Runs {@code work} on the shard's agent thread and waits for it, bounded. */
    private static JsonNode onAgent(final Shard shard, final Supplier<JsonNode> work)
    {
        return await(submit(shard, work), shard,
            System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(APPLY_TIMEOUT_MS));
    }

    /** Queues {@code work} for the shard's agent thread. */
    private static CompletableFuture<JsonNode> submit(final Shard shard, final Supplier<JsonNode> work)
    {
        final CompletableFuture<JsonNode> done = new CompletableFuture<>();
        if (!shard.requests.offer(() ->
        {
            try
            {
                done.complete(work.get());
            }
            catch (final RuntimeException ex)
            {
                done.completeExceptionally(ex);
            }
        }))
        {
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "switch control: too many requests queued");
        }
        return done;
    }

    /** What the shard's agent thread answered, waited for until {@code deadlineNs} (System.nanoTime). */
    private static JsonNode await(final CompletableFuture<JsonNode> done, final Shard shard, final long deadlineNs)
    {
        try
        {
            return done.get(Math.max(0, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (final TimeoutException ex)
        {
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "switch control: the switch agent (" + shard.roleName()
                + ") did not apply the request within " + APPLY_TIMEOUT_MS + " ms (is its agent thread running?)");
        }
        catch (final ExecutionException ex)
        {
            if (ex.getCause() instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new IllegalStateException(ex.getCause());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "switch control: interrupted");
        }
    }

    @Override
    public String toString()
    {
        return "SwitchControlServer[" + address() + " -> " + ctx.dataAddress + "]";
    }
}
