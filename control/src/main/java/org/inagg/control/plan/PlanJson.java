package org.inagg.control.plan;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.inagg.control.aggregation.AggregationGroup;
import org.inagg.control.aggregation.AggregationProblem;
import org.inagg.control.aggregation.CapacityViolation;
import org.inagg.control.aggregation.IntegralRouting;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.aggregation.RouteOption;
import org.inagg.control.multicast.MulticastTree;
import org.inagg.control.topology.Path;
import org.inagg.control.topology.Topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds an {@link InaPlan} from a rounded routing and multicast trees, and reads and writes it as JSON (schema
 * {@code inagg-plan/1}). Group ids are the switch-side job ids: a switch matches a packet's job id against its
 * table, sums {@code expectedContributors} contributions, then sends the sum out of {@code upstreamPort}.
 */
public final class PlanJson {

    public static final String SCHEMA = "inagg-plan/1";
    private static final ObjectMapper MAPPER = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT)
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private PlanJson() {
    }

    /** The plan of a rounded routing plus its multicast trees. */
    public static InaPlan plan(String algorithm, RandomizedRounding.RoundingResult result,
                               List<MulticastTree> trees) {
        IntegralRouting routing = result.best();
        AggregationProblem problem = routing.problem();
        Topology topology = problem.topology();
        Map<String, Double> split = new LinkedHashMap<>();
        for (int j = 0; j < problem.parameterServerCount(); j++) {
            split.put(id(topology, problem.parameterServer(j)), routing.split()[j]);
        }
        List<InaPlan.WorkerRoute> workers = new ArrayList<>();
        Map<Integer, List<String>> members = new LinkedHashMap<>();
        for (int i = 0; i < routing.workerCount(); i++) {
            int worker = routing.worker(i);
            List<InaPlan.Share> shares = new ArrayList<>();
            for (int j = 0; j < problem.parameterServerCount(); j++) {
                int choice = routing.choice(i, j);
                if (choice < 0) {
                    continue;
                }
                RouteOption option = problem.options().get(choice);
                Path full = option.fromAccess().prepend(topology.uplink(worker));
                String ps = id(topology, problem.parameterServer(j));
                if (option.isDirect()) {
                    shares.add(new InaPlan.Share(ps, routing.split()[j], ps, null, ids(full, topology)));
                } else {
                    AggregationGroup group = problem.groups().get(option.groupId());
                    shares.add(new InaPlan.Share(ps, routing.split()[j], id(topology, group.aggregationSwitch()),
                        group.id(), ids(full, topology)));
                    members.computeIfAbsent(group.id(), k -> new ArrayList<>()).add(id(topology, worker));
                }
            }
            workers.add(new InaPlan.WorkerRoute(id(topology, worker), shares));
        }
        Map<String, List<InaPlan.SwitchJobEntry>> tables = new LinkedHashMap<>();
        for (var entry : members.entrySet()) {
            AggregationGroup group = problem.groups().get(entry.getKey());
            tables.computeIfAbsent(id(topology, group.aggregationSwitch()), k -> new ArrayList<>())
                .add(new InaPlan.SwitchJobEntry(group.id(), id(topology, problem.parameterServer(group.psSlot())),
                    entry.getValue().size(), List.copyOf(entry.getValue()), topology.port(group.upstream().arc(0)),
                    ids(group.upstream(), topology)));
        }
        List<InaPlan.MulticastTreeConfig> multicast = new ArrayList<>();
        for (MulticastTree tree : trees) {
            Map<String, List<Integer>> ports = new LinkedHashMap<>();
            for (Map.Entry<String, BitSet> hop : tree.portBitmaps(topology).entrySet()) {
                ports.put(hop.getKey(), hop.getValue().stream().boxed().toList());
            }
            multicast.add(new InaPlan.MulticastTreeConfig(id(topology, tree.source()),
                Arrays.stream(tree.receivers()).mapToObj(r -> id(topology, r)).toList(), ports));
        }
        List<InaPlan.Violation> violations = new ArrayList<>();
        for (CapacityViolation violation : result.violations()) {
            violations.add(new InaPlan.Violation(violation.resource(), violation.loadGbps(),
                violation.capacityGbps()));
        }
        return new InaPlan(SCHEMA, topology.name(), algorithm, routing.rateGbps(), result.fractional().rateGbps(),
            split, workers, tables, multicast, violations);
    }

    public static String write(InaPlan plan) {
        try {
            return MAPPER.writeValueAsString(plan);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Shorthand for {@code write(plan(...))}. */
    public static String write(String algorithm, RandomizedRounding.RoundingResult result,
                               List<MulticastTree> trees) {
        return write(plan(algorithm, result, trees));
    }

    /**
     * Reads a plan; rejects other schemas, unknown fields, fields given twice and missing (or null) fields, so that
     * whatever reads the plan next finds every value it needs.
     *
     * @throws IllegalArgumentException saying what is wrong.
     */
    public static InaPlan read(String json) {
        InaPlan plan;
        try {
            plan = MAPPER.readValue(json, InaPlan.class);
        } catch (IOException e) {
            throw new IllegalArgumentException("malformed plan: " + e.getMessage(), e);
        }
        if (plan == null) {
            throw new IllegalArgumentException("malformed plan: no JSON object");
        }
        if (!SCHEMA.equals(plan.schema())) {
            throw new IllegalArgumentException("plan schema " + plan.schema() + ", expected " + SCHEMA);
        }
        requireComplete(plan);
        return plan;
    }

    /**
     * Every field present and no null in a list or map, except a share's {@code group} (null when direct) and
     * {@code path} (checked where it is used): Jackson leaves a missing field null, and the deployment would fail on
     * it with a NullPointerException instead of a message (fuzzing finding, docs/fuzzing.md).
     */
    private static void requireComplete(InaPlan plan) {
        present(plan.topology(), "topology");
        present(plan.algorithm(), "algorithm");
        present(plan.split(), "split").forEach((ps, share) -> present(share, "split." + ps));
        present(plan.violationsAtLpRate(), "violationsAtLpRate").forEach(v -> present(v, "violationsAtLpRate[]"));
        for (InaPlan.WorkerRoute route : present(plan.workers(), "workers")) {
            present(route, "workers[]");
            present(route.worker(), "workers[].worker");
            for (InaPlan.Share share : present(route.shares(), "shares of worker " + route.worker())) {
                present(share, "shares[] of worker " + route.worker());
                present(share.ps(), "ps of a share of worker " + route.worker());
                present(share.aggregateAt(), "aggregateAt of a share of worker " + route.worker());
                if (share.path() != null) {
                    share.path().forEach(node -> present(node, "a node of the path of worker " + route.worker()));
                }
            }
        }
        present(plan.switchJobTables(), "switchJobTables").forEach((sw, rows) -> {
            for (InaPlan.SwitchJobEntry row : present(rows, "switchJobTables." + sw)) {
                present(row, "switchJobTables." + sw + "[]");
                present(row.ps(), "ps of a row of switch " + sw);
                present(row.contributors(), "contributors of a row of switch " + sw)
                    .forEach(c -> present(c, "contributors[] of switch " + sw));
            }
        });
        for (InaPlan.MulticastTreeConfig tree : present(plan.multicastTrees(), "multicastTrees")) {
            present(tree, "multicastTrees[]");
            present(tree.ports(), "ports of a multicast tree").forEach((node, ports) ->
                present(ports, "ports of node " + node).forEach(port -> present(port, "a port of node " + node)));
        }
    }

    private static <T> T present(T value, String what) {
        if (value == null) {
            throw new IllegalArgumentException("plan: " + what + " is missing or null");
        }
        return value;
    }

    private static String id(Topology topology, int node) {
        return topology.node(node).id();
    }

    private static List<String> ids(Path path, Topology topology) {
        return List.of(path.nodeIds(topology));
    }
}
