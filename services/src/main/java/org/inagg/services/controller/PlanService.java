package org.inagg.services.controller;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.inart.InArtPlanner;
import org.inagg.control.inart.InArtResult;
import org.inagg.control.inart.SplitMethod;
import org.inagg.control.lp.Cancellation;
import org.inagg.control.multicast.LinkReservations;
import org.inagg.control.multicast.MulticastTree;
import org.inagg.control.multicast.PathAwareMulticast;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.Topology;
import org.inagg.control.topology.TopologyJson;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;

/**
 * {@code POST /v1/plans}: the planners of {@code inagg-control plan} on a posted topology: GRID (one parameter server)
 * or InArt (several), each PS's results multicast on a path-aware tree. The answer is the plan file
 * ({@code inagg-plan/1}, control/README.md) that {@code deploy} reads.
 * <p>
 * A posted topology can ask for minutes of work, so a plan runs on a thread of its own ({@value #THREAD_NAME}), one
 * plan at a time, within a time limit ({@link ControllerContext#planTimeoutMs}). At the limit the request is answered
 * 503 naming the limit, and the thread is interrupted: the planners stop at their next step and an LP solve at its
 * next iteration ({@link org.inagg.control.lp.Cancellation}; ojAlgo's presolve and first factorisation, about a
 * second for 10^4 variables, run to their end), then the thread ends. A plan asked for while another runs, or while a
 * stopped one winds down, is answered 503 too. The HTTP thread that waits is held no longer than the limit.
 */
final class PlanService implements AutoCloseable
{
    static final String THREAD_NAME = "inagg-controller-planner";
    private static final System.Logger LOGGER = System.getLogger(PlanService.class.getName());
    private static final Set<String> FIELDS = Set.of("topology", "split", "pathSlack", "pathLimit", "draws", "seed");

    private final long timeoutMs;
    /** The thread of the plan running now, or null. */
    private final AtomicReference<Thread> planning = new AtomicReference<>();
    private volatile boolean closed;

    PlanService(final long timeoutMs)
    {
        this.timeoutMs = timeoutMs;
    }

    /** Plans {@code body}'s topology within the time limit. */
    JsonNode plan(final byte[] body)
    {
        final FutureTask<JsonNode> result = new FutureTask<>(() -> planNow(body));
        final long startedNs = System.nanoTime();
        final Thread thread = Thread.ofPlatform().daemon().name(THREAD_NAME).unstarted(() ->
        {
            try
            {
                result.run();
            }
            finally
            {
                planning.set(null);
                if (result.isCancelled())
                {
                    LOGGER.log(System.Logger.Level.INFO, () -> "controller: a plan stopped at its limit of "
                        + timeoutMs + " ms ended " + (TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNs)
                        - timeoutMs) + " ms after it");
                }
            }
        });
        if (closed || !planning.compareAndSet(null, thread))
        {
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "the controller is computing another plan (one at a time,"
                + " each for at most " + timeoutMs + " ms); retry later");
        }
        thread.start();
        try
        {
            return result.get(timeoutMs, TimeUnit.MILLISECONDS);
        }
        catch (final TimeoutException ex)
        {
            result.cancel(true);
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "the plan took longer than the controller's limit of "
                + timeoutMs + " ms (--plan-timeout-ms) and was stopped; ask for fewer draws or a smaller pathLimit,"
                + " or plan this topology with 'inagg-control plan'");
        }
        catch (final InterruptedException ex)
        {
            result.cancel(true);
            Thread.currentThread().interrupt();
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "the controller is stopping");
        }
        catch (final ExecutionException ex)
        {
            if (ex.getCause() instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new IllegalStateException("the planner failed: " + ex.getCause(), ex.getCause());
        }
    }

    /** Whether a plan's thread still runs (a stopped one until it reaches its next step). */
    boolean planning()
    {
        return planning.get() != null;
    }

    @Override
    public void close()
    {
        closed = true;
        final Thread thread = planning.get();
        if (thread != null)
        {
            thread.interrupt();
        }
    }

    static JsonNode planNow(final byte[] body)
    {
        final ObjectNode request = JsonHttp.parseObject(body);
        JsonHttp.onlyFields(request, FIELDS);
        final JsonNode topologyNode = request.get("topology");
        if (!(topologyNode instanceof ObjectNode))
        {
            throw HttpFailure.badRequest("field 'topology' must be a topology object (control/README.md)");
        }
        final Topology topology;
        try
        {
            topology = TopologyJson.parse(topologyNode.toString());
        }
        catch (final RuntimeException ex)
        {
            throw HttpFailure.badRequest("field 'topology': " + ex.getMessage());
        }
        final SplitMethod split;
        try
        {
            split = SplitMethod.valueOf(JsonHttp.text(request, "split", SplitMethod.EXACT_LP.name()));
        }
        catch (final IllegalArgumentException ex)
        {
            throw HttpFailure.badRequest("field 'split' must be one of " + List.of(SplitMethod.values()));
        }
        final int slack = (int)JsonHttp.integer(request, "pathSlack", 0, 16, 1);
        final int limit = (int)JsonHttp.integer(request, "pathLimit", 1, 256, 8);
        final int draws = (int)JsonHttp.integer(request, "draws", 1, 4096, 64);
        final long seed = JsonHttp.integer(request, "seed", Long.MIN_VALUE, Long.MAX_VALUE, 1);
        final InArtPlanner planner = new InArtPlanner(new CandidateSettings(slack, limit, seed), draws, seed);
        final InArtResult result;
        try
        {
            result = planner.plan(topology, split);
        }
        catch (final java.util.concurrent.CancellationException ex)
        {
            throw ex;
        }
        catch (final RuntimeException ex)
        {
            throw new HttpFailure(422, "no plan for topology " + topology.name() + ": " + ex.getMessage());
        }
        final RandomizedRounding.RoundingResult routing = result.routing();
        final String algorithm = topology.parameterServers().length == 1 ? "grid" : "inart";
        final List<MulticastTree> trees = new ArrayList<>();
        final PathAwareMulticast multicast = new PathAwareMulticast(new LinkReservations(topology));
        final int[] servers = topology.parameterServers();
        for (int i = 0; i < servers.length; i++)
        {
            Cancellation.check("the multicast tree of parameter server " + i + " of " + servers.length);
            final double demand = result.rateGbps() * result.split()[i];
            final MulticastTree tree = multicast.reserve(servers[i], topology.workers(), demand);
            trees.add(tree != null ? tree : multicast.reserveBestEffort(servers[i], topology.workers(), demand));
        }
        try
        {
            return JsonHttp.MAPPER.readTree(PlanJson.write(algorithm, routing, trees));
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("the planner wrote a plan that is not JSON", ex);
        }
    }
}
