package org.inagg.control.aggregation;

import org.inagg.control.lp.Cancellation;
import org.inagg.control.topology.Path;
import org.inagg.control.topology.PathFinder;
import org.inagg.control.topology.Topology;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The candidate routes of every worker class for every PS under one {@link RoutingScheme}: the input of
 * {@link AggregationLp}. Built once per topology and scheme; immutable.
 */
public final class AggregationProblem {

    private final Topology topology;
    private final RoutingScheme scheme;
    private final int[] parameterServers;
    private final List<WorkerClass> classes;
    private final List<RouteOption> options;
    private final List<AggregationGroup> groups;
    private final int[] classOfWorker;
    private final List<List<List<RouteOption>>> optionsByClassAndPs;

    private AggregationProblem(Topology topology, RoutingScheme scheme, int[] parameterServers,
                               List<WorkerClass> classes, List<RouteOption> options, List<AggregationGroup> groups) {
        this.topology = topology;
        this.scheme = scheme;
        this.parameterServers = parameterServers;
        this.classes = List.copyOf(classes);
        this.options = List.copyOf(options);
        this.groups = List.copyOf(groups);
        this.classOfWorker = new int[topology.nodeCount()];
        java.util.Arrays.fill(classOfWorker, -1);
        for (WorkerClass workerClass : classes) {
            for (int worker : workerClass.workers()) {
                classOfWorker[worker] = workerClass.id();
            }
        }
        this.optionsByClassAndPs = new ArrayList<>();
        for (int c = 0; c < classes.size(); c++) {
            List<List<RouteOption>> perPs = new ArrayList<>();
            for (int j = 0; j < parameterServers.length; j++) {
                perPs.add(new ArrayList<>());
            }
            optionsByClassAndPs.add(perPs);
        }
        for (RouteOption option : options) {
            optionsByClassAndPs.get(option.classId()).get(option.psSlot()).add(option);
        }
    }

    /** Every worker and every PS of the topology. */
    public static AggregationProblem build(Topology topology, RoutingScheme scheme, CandidateSettings settings) {
        return build(topology, scheme, settings, topology.workers(), topology.parameterServers());
    }

    /** Only the given workers and parameter servers (node indices) take part. */
    public static AggregationProblem build(Topology topology, RoutingScheme scheme, CandidateSettings settings,
                                           int[] workers, int[] parameterServers) {
        if (parameterServers.length == 0) {
            throw new IllegalArgumentException("no parameter server in " + topology.name());
        }
        int ecmpWays = scheme.usesEcmp() ? settings.pathLimit() : 1;
        Map<List<Object>, List<Integer>> members = new LinkedHashMap<>();
        for (int worker : workers) {
            int bucket = scheme.usesEcmp() ? (int) Long.remainderUnsigned(mix(worker, settings.seed()), ecmpWays) : 0;
            List<Object> key = List.of(topology.accessSwitch(worker),
                topology.arcCapacityGbps(topology.uplink(worker)), bucket);
            members.computeIfAbsent(key, k -> new ArrayList<>()).add(worker);
        }
        List<WorkerClass> classes = new ArrayList<>();
        for (var entry : members.entrySet()) {
            classes.add(new WorkerClass(classes.size(), (Integer) entry.getKey().get(0),
                (Double) entry.getKey().get(1), (Integer) entry.getKey().get(2),
                entry.getValue().stream().mapToInt(Integer::intValue).toArray()));
        }

        PathFinder finder = new PathFinder(topology);
        int slack = scheme.usesEcmp() ? 0 : settings.pathSlack();
        List<int[]> hopsToPs = new ArrayList<>();
        for (int ps : parameterServers) {
            hopsToPs.add(finder.hopsTo(ps));
        }
        Map<Long, List<Path>> pathCache = new HashMap<>();
        Map<List<Object>, AggregationGroup> groupsByKey = new LinkedHashMap<>();
        List<RouteOption> options = new ArrayList<>();
        Set<List<Object>> seen = new HashSet<>();
        for (WorkerClass workerClass : classes) {
            Cancellation.check("candidate paths of worker class " + workerClass.id() + " of " + classes.size());
            int access = workerClass.accessSwitch();
            for (int j = 0; j < parameterServers.length; j++) {
                int ps = parameterServers[j];
                int[] hops = hopsToPs.get(j);
                long cacheKey = (long) access * parameterServers.length + j;
                List<Path> paths = pathCache.computeIfAbsent(cacheKey, k -> finder.paths(access, ps, slack,
                    settings.pathLimit(), settings.seed() * 1_000_003L + cacheKey, hops));
                if (paths.isEmpty()) {
                    continue;
                }
                List<Path> usable = scheme.usesEcmp()
                    ? List.of(paths.get(workerClass.ecmpBucket() % paths.size())) : paths;
                for (Path path : usable) {
                    addOptions(topology, scheme, workerClass.id(), j, path, groupsByKey, options, seen);
                }
            }
        }
        return new AggregationProblem(topology, scheme, parameterServers.clone(), classes, options,
            new ArrayList<>(groupsByKey.values()));
    }

    private static void addOptions(Topology topology, RoutingScheme scheme, int classId, int psSlot, Path path,
                                   Map<List<Object>, AggregationGroup> groupsByKey, List<RouteOption> options,
                                   Set<List<Object>> seen) {
        int firstProgrammable = -1;
        List<Integer> programmablePositions = new ArrayList<>();
        for (int i = 0; i < path.length(); i++) {
            int node = topology.tail(path.arc(i));
            if (topology.node(node).isProgrammable()) {
                programmablePositions.add(i);
                if (firstProgrammable < 0) {
                    firstProgrammable = i;
                }
            }
        }
        boolean direct = switch (scheme) {
            case NO_INA, ATP, ROUTE_SELECTION -> true;
            case SWITCHML -> firstProgrammable < 0;
        };
        if (direct) {
            addOption(classId, psSlot, path, -1, options, seen);
        }
        List<Integer> aggregationPositions = switch (scheme) {
            case NO_INA -> List.of();
            case SWITCHML, ATP -> firstProgrammable < 0 ? List.of() : List.of(firstProgrammable);
            case ROUTE_SELECTION -> programmablePositions;
        };
        for (int position : aggregationPositions) {
            int aggregationSwitch = topology.tail(path.arc(position));
            Path upstream = path.suffix(position);
            List<Object> groupKey = List.of(aggregationSwitch, psSlot, upstream);
            AggregationGroup group = groupsByKey.computeIfAbsent(groupKey,
                k -> new AggregationGroup(groupsByKey.size(), aggregationSwitch, psSlot, upstream));
            addOption(classId, psSlot, path.prefix(position), group.id(), options, seen);
        }
    }

    private static void addOption(int classId, int psSlot, Path fromAccess, int groupId, List<RouteOption> options,
                                  Set<List<Object>> seen) {
        if (seen.add(List.of(classId, psSlot, fromAccess, groupId))) {
            options.add(new RouteOption(options.size(), classId, psSlot, fromAccess, groupId));
        }
    }

    private static long mix(long value, long seed) {
        long z = value * 0x9E3779B97F4A7C15L + seed;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    public Topology topology() {
        return topology;
    }

    public RoutingScheme scheme() {
        return scheme;
    }

    /** Node indices of the parameter servers; a PS is referred to by its position here (its slot). */
    public int[] parameterServers() {
        return parameterServers.clone();
    }

    public int parameterServerCount() {
        return parameterServers.length;
    }

    public int parameterServer(int slot) {
        return parameterServers[slot];
    }

    public List<WorkerClass> classes() {
        return classes;
    }

    public List<RouteOption> options() {
        return options;
    }

    public List<AggregationGroup> groups() {
        return groups;
    }

    public List<RouteOption> options(int classId, int psSlot) {
        return optionsByClassAndPs.get(classId).get(psSlot);
    }

    public int classOf(int worker) {
        return classOfWorker[worker];
    }

    public int workerCount() {
        return classes.stream().mapToInt(WorkerClass::size).sum();
    }
}
