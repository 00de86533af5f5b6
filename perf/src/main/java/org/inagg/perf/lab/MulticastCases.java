package org.inagg.perf.lab;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import org.inagg.control.multicast.LinkReservations;
import org.inagg.control.multicast.MulticastScenarios;
import org.inagg.control.multicast.MulticastTree;
import org.inagg.control.multicast.PathAwareMulticast;
import org.inagg.control.multicast.RandomMulticast;
import org.inagg.control.plan.InaPlan;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.Node;
import org.inagg.control.topology.Topology;

/**
 * Path-aware multicast's fabric claim as deployable plans (pure: tested without root). Two jobs, each a parameter
 * server and workers on other leaves of a spine-leaf topology file; each job's multicast tree (PS to its workers) is
 * drawn two ways, as the simulator's {@link MulticastScenarios#collidingSenders} draws them:
 * <ul>
 *   <li><b>random</b>: {@link RandomMulticast} trees (one random spine per tree) from seeds 1, 2, ... until the two
 *       trees share a link, the colliding draw the paper describes (not the typical one);</li>
 *   <li><b>path-aware</b>: {@link PathAwareMulticast} trees, each reserving its parameter server's link rate, so the
 *       second avoids the first where the fabric has room.</li>
 * </ul>
 * A tree becomes the datapath's aggregation tree ({@link #planOf}): the switch above each worker (its leaf, which must
 * be programmable) sums that leaf's workers of the job and sends one partial to the parameter server along the tree's
 * path reversed; the server sends each result once back down that path to the switch, which multicasts it to its
 * workers. So the spine a tree takes carries the job's traffic both ways.
 */
public final class MulticastCases
{
    /** Seeds tried for a colliding random draw. */
    static final int MAX_SEEDS = 10_000;

    /**
     * One job.
     *
     * @param ps      its parameter server's node id.
     * @param workers its workers' node ids, rank order.
     */
    public record Job(String ps, List<String> workers)
    {
        public Job
        {
            workers = List.copyOf(workers);
        }

        /** {@code PS=W1,W2,...} as {@code --job} takes it. */
        public static Job parse(final String text)
        {
            final int equals = text.indexOf('=');
            if (equals <= 0 || equals == text.length() - 1)
            {
                throw new IllegalArgumentException("--job must be PS=WORKER,WORKER,..., not '" + text + "'");
            }
            return new Job(text.substring(0, equals).strip(),
                List.of(text.substring(equals + 1).split(",")).stream().map(String::strip).toList());
        }
    }

    /**
     * One way of drawing the jobs' trees, and the plans that deploy them.
     *
     * @param name        {@code random} or {@code path-aware}.
     * @param description how the trees were drawn and which spines they take.
     * @param trees       job i's tree at i.
     * @param plans       job i's aggregation plan at i.
     * @param spines      job i's spines (of the tree) at i.
     */
    public record Case(String name, String description, List<MulticastTree> trees, List<InaPlan> plans,
                       List<Set<String>> spines)
    {
    }

    private MulticastCases()
    {
    }

    /**
     * The spines of a topology: switches with no host attached, in file order.
     */
    public static List<String> spines(final Topology topology)
    {
        final List<String> spines = new ArrayList<>();
        for (final int s : topology.switches())
        {
            boolean hosts = false;
            for (final int arc : topology.arcsOut(s))
            {
                hosts |= !topology.node(topology.head(arc)).isSwitch();
            }
            if (!hosts)
            {
                spines.add(topology.node(s).id());
            }
        }
        return spines;
    }

    /**
     * Checks the jobs against the topology.
     *
     * @throws IllegalArgumentException naming what is wrong: not two jobs, an unknown node, a node of the wrong kind or
     *                                  in two jobs, a worker on its parameter server's leaf or under a switch that
     *                                  cannot sum, fewer than two spines.
     */
    public static void check(final Topology topology, final List<Job> jobs)
    {
        if (jobs.size() != 2)
        {
            throw new IllegalArgumentException("path-aware multicast's fabric claim is about two jobs: give --job twice, "
                + "not " + jobs.size() + " times");
        }
        final List<String> spines = spines(topology);
        if (spines.size() < 2)
        {
            throw new IllegalArgumentException("topology " + topology.name() + " has " + spines.size()
                + " spine(s) (switches with no host) " + spines + "; two jobs' trees need two spines to avoid each "
                + "other");
        }
        final Set<String> seen = new HashSet<>();
        for (final Job job : jobs)
        {
            final int ps = node(topology, job.ps(), "parameter server");
            if (!topology.node(ps).isParameterServer())
            {
                throw new IllegalArgumentException("node '" + job.ps() + "' of --job is a "
                    + topology.node(ps).kind() + ", not a parameter server");
            }
            if (job.workers().isEmpty() || job.workers().size() > 16)
            {
                throw new IllegalArgumentException("job of " + job.ps() + " needs 1..16 workers, not "
                    + job.workers().size());
            }
            if (!seen.add(job.ps()))
            {
                throw new IllegalArgumentException("node '" + job.ps() + "' is in two jobs");
            }
            for (final String id : job.workers())
            {
                final int worker = node(topology, id, "worker");
                final Node w = topology.node(worker);
                if (!w.isWorker())
                {
                    throw new IllegalArgumentException("node '" + id + "' of --job " + job.ps() + " is a " + w.kind()
                        + ", not a worker");
                }
                if (!seen.add(id))
                {
                    throw new IllegalArgumentException("node '" + id + "' is in two jobs (or twice in one)");
                }
                final Node leaf = topology.node(topology.accessSwitch(worker));
                if (topology.accessSwitch(worker) == topology.accessSwitch(ps))
                {
                    throw new IllegalArgumentException("worker " + id + " is on its parameter server " + job.ps()
                        + "'s leaf " + leaf.id() + "; the claim is about workers on other leaves");
                }
                if (!leaf.isProgrammable())
                {
                    throw new IllegalArgumentException("worker " + id + "'s switch " + leaf.id()
                        + " is not programmable (aggregationCapacityGbps 0): it cannot sum the job's workers");
                }
            }
        }
    }

    private static int node(final Topology topology, final String id, final String role)
    {
        if (!topology.contains(id))
        {
            throw new IllegalArgumentException("unknown node '" + id + "' (a " + role + " of --job) in topology "
                + topology.name());
        }
        return topology.index(id);
    }

    /** Both cases: the colliding random draw, then the path-aware trees. */
    public static List<Case> both(final Topology topology, final List<Job> jobs)
    {
        check(topology, jobs);
        return List.of(random(topology, jobs), pathAware(topology, jobs));
    }

    /** The first random draw (seeds 1, 2, ...) whose two trees share a link. */
    static Case random(final Topology topology, final List<Job> jobs)
    {
        for (long seed = 1; seed <= MAX_SEEDS; seed++)
        {
            final Random draw = new Random(seed);
            final List<MulticastTree> trees = new ArrayList<>();
            for (final Job job : jobs)
            {
                trees.add(RandomMulticast.build(topology, topology.index(job.ps()), receivers(topology, job), draw));
            }
            if (trees.get(0).sharesArcWith(trees.get(1)))
            {
                return of(topology, jobs, "random", trees, "the colliding draw (seed " + seed + ", the first of 1, 2, "
                    + "... whose two trees share a link, as the simulator draws it; not the typical draw)");
            }
        }
        throw new IllegalArgumentException("no random draw of seeds 1.." + MAX_SEEDS + " makes the two jobs' trees "
            + "share a link in topology " + topology.name());
    }

    /** Each job's tree reserved in turn, needing its parameter server's link rate. */
    static Case pathAware(final Topology topology, final List<Job> jobs)
    {
        final PathAwareMulticast planner = new PathAwareMulticast(new LinkReservations(topology));
        final List<MulticastTree> trees = new ArrayList<>();
        final List<String> bestEffort = new ArrayList<>();
        for (final Job job : jobs)
        {
            final int ps = topology.index(job.ps());
            final double demand = topology.arcCapacityGbps(topology.uplink(ps));
            MulticastTree tree = planner.reserve(ps, receivers(topology, job), demand);
            if (tree == null)
            {
                tree = planner.reserveBestEffort(ps, receivers(topology, job), demand);
                bestEffort.add(job.ps());
            }
            trees.add(tree);
        }
        return of(topology, jobs, "path-aware", trees, "PathAwareMulticast, each tree reserving its parameter "
            + "server's link rate" + (bestEffort.isEmpty() ? "" : "; no room left for " + bestEffort
            + ", best effort"));
    }

    private static Case of(final Topology topology, final List<Job> jobs, final String name,
        final List<MulticastTree> trees, final String how)
    {
        final List<InaPlan> plans = new ArrayList<>();
        final List<Set<String>> spines = new ArrayList<>();
        final StringBuilder description = new StringBuilder(how).append(':');
        for (int j = 0; j < jobs.size(); j++)
        {
            plans.add(planOf(topology, trees.get(j), j + 1, jobs.get(j)));
            spines.add(spinesOf(topology, trees.get(j)));
            description.append(j == 0 ? " " : "; ").append("job ").append(j + 1).append(" (").append(jobs.get(j).ps())
                .append(") through ").append(String.join(", ", spines.get(j)));
        }
        return new Case(name, description.toString(), List.copyOf(trees), List.copyOf(plans), List.copyOf(spines));
    }

    private static int[] receivers(final Topology topology, final Job job)
    {
        return job.workers().stream().mapToInt(topology::index).toArray();
    }

    /** The spines a tree passes, sorted. */
    static Set<String> spinesOf(final Topology topology, final MulticastTree tree)
    {
        final Set<String> spines = new TreeSet<>();
        final List<String> all = spines(topology);
        for (final int arc : tree.arcs())
        {
            for (final int end : new int[] {topology.tail(arc), topology.head(arc)})
            {
                if (all.contains(topology.node(end).id()))
                {
                    spines.add(topology.node(end).id());
                }
            }
        }
        return spines;
    }

    /**
     * The aggregation plan of a tree: rank r is {@code job.workers().get(r)}, summed at the switch above it on the
     * tree (its leaf), whose partial goes to the parameter server along the tree's path reversed.
     *
     * @throws IllegalArgumentException when a worker's switch on the tree cannot sum (not programmable).
     */
    public static InaPlan planOf(final Topology topology, final MulticastTree tree, final int jobId, final Job job)
    {
        final Map<Integer, Integer> into = new HashMap<>();
        for (final int arc : tree.arcs())
        {
            into.put(topology.head(arc), arc);
        }
        final List<InaPlan.WorkerRoute> routes = new ArrayList<>();
        final Map<String, List<String>> upstream = new LinkedHashMap<>();
        final Map<String, Integer> upstreamPort = new HashMap<>();
        final Map<String, List<String>> contributors = new LinkedHashMap<>();
        for (final String worker : job.workers())
        {
            final List<String> down = new ArrayList<>();
            int node = topology.index(worker);
            while (node != tree.source())
            {
                down.addFirst(topology.node(node).id());
                final Integer arc = into.get(node);
                if (arc == null)
                {
                    throw new IllegalArgumentException("the tree of " + job.ps() + " does not reach " + worker);
                }
                node = topology.tail(arc);
            }
            down.addFirst(job.ps());
            final String leaf = down.get(down.size() - 2);
            if (!topology.node(topology.index(leaf)).isProgrammable())
            {
                throw new IllegalArgumentException("worker " + worker + "'s switch " + leaf + " on the tree of "
                    + job.ps() + " is not programmable");
            }
            final List<String> up = down.subList(0, down.size() - 1).reversed();
            upstream.put(leaf, List.copyOf(up));
            upstreamPort.put(leaf, topology.port(topology.arcBetween(topology.index(leaf),
                topology.index(up.get(1)))));
            contributors.computeIfAbsent(leaf, k -> new ArrayList<>()).add(worker);
            routes.add(new InaPlan.WorkerRoute(worker, List.of(new InaPlan.Share(job.ps(), 1.0, leaf, jobId,
                List.of(worker, leaf)))));
        }
        final Map<String, List<InaPlan.SwitchJobEntry>> tables = new LinkedHashMap<>();
        for (final Map.Entry<String, List<String>> leaf : contributors.entrySet())
        {
            tables.put(leaf.getKey(), List.of(new InaPlan.SwitchJobEntry(jobId, job.ps(), leaf.getValue().size(),
                List.copyOf(leaf.getValue()), upstreamPort.get(leaf.getKey()), upstream.get(leaf.getKey()))));
        }
        final Map<String, List<Integer>> ports = new LinkedHashMap<>();
        tree.portBitmaps(topology).forEach((id, bits) -> ports.put(id, bits.stream().boxed().toList()));
        // a tree has no planned rate: the LP fields carry NaN
        return new InaPlan(PlanJson.SCHEMA, topology.name(), "multicast", Double.NaN, Double.NaN,
            Map.of(job.ps(), 1.0), routes, tables, List.of(new InaPlan.MulticastTreeConfig(job.ps(), job.workers(),
                ports)), List.of());
    }

    /**
     * What the flow-level simulator gives for the trees (each carrying {@code gigabits} once per link, sharing links
     * max-min fairly): the time until both have delivered.
     */
    public static double simulatedSeconds(final Topology topology, final Case c, final double gigabits)
    {
        return MulticastScenarios.multicastSeconds(topology, c.trees(), gigabits);
    }

    /** Links both cases' trees of a job share (for tests and the output): arc descriptions. */
    static Set<String> sharedLinks(final Topology topology, final Case c)
    {
        final Set<Integer> first = new LinkedHashSet<>();
        for (final int arc : c.trees().get(0).arcs())
        {
            first.add(arc);
        }
        final Set<String> shared = new LinkedHashSet<>();
        for (final int arc : c.trees().get(1).arcs())
        {
            if (first.contains(arc))
            {
                shared.add(topology.describeArc(arc));
            }
        }
        return shared;
    }
}
