package org.inagg.services.controller;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.inart.InArtPlanner;
import org.inagg.control.inart.InArtResult;
import org.inagg.control.inart.SplitMethod;
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
 * A posted topology can ask for minutes of work, so plans run one at a time on a planner thread of their own, each
 * within a time limit ({@link ControllerContext#planTimeoutMs}): a plan past it is interrupted (the planner stops at
 * its next rounding draw or local-search pass; an LP solve in progress runs to its end) and answered 503 naming the
 * limit; a plan asked for while another runs is answered 503 too. The HTTP thread that waits is held no longer than
 * the limit.
 */
final class PlanService implements AutoCloseable
{
    private static final Set<String> FIELDS = Set.of("topology", "split", "pathSlack", "pathLimit", "draws", "seed");

    private final long timeoutMs;
    private final ThreadPoolExecutor planner;

    PlanService(final long timeoutMs)
    {
        this.timeoutMs = timeoutMs;
        this.planner = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new SynchronousQueue<>(), r ->
        {
            final Thread thread = new Thread(r, "inagg-controller-planner");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Plans {@code body}'s topology within the time limit. */
    JsonNode plan(final byte[] body)
    {
        final Future<JsonNode> result;
        try
        {
            result = planner.submit(() -> planNow(body));
        }
        catch (final RejectedExecutionException ex)
        {
            throw new HttpFailure(HttpFailure.UNAVAILABLE, "the controller is computing another plan (one at a time,"
                + " each for at most " + timeoutMs + " ms); retry later");
        }
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

    @Override
    public void close()
    {
        planner.shutdownNow();
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
