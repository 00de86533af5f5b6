package org.inagg.control.cli;

import org.inagg.control.deploy.InProcessPlanCluster;
import org.inagg.control.deploy.PlanDeployment;
import org.inagg.control.plan.InaPlan;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.TopologyJson;
import org.inagg.p4.control.JobTable;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.softswitch.SwitchCounter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;

/** Plan file in: the plan deployed on software switches and PSs in this process, checked against the flat run. */
@Command(name = "deploy", mixinStandardHelpOptions = true,
    description = {"Deploys a plan file on software switches (two-level aggregation) and parameter servers in this "
        + "process, all-reduces random gradients on every worker, and checks each result bit for bit against one "
        + "switch summing all workers."})
public final class DeployCommand implements Callable<Integer> {

    @Option(names = "--plan", description = "plan JSON file (from `plan`); or --controller with --topology")
    private Path planFile;

    @Option(names = "--controller", paramLabel = "URL",
        description = "ask the controller (bin/inagg controller, POST /v1/plans, docs/controller.md) for the plan of"
            + " --topology instead of reading --plan")
    private String controller;

    @Option(names = {"-n", "--elements"}, defaultValue = "1048576",
        description = "floats per worker per all-reduce (default ${DEFAULT-VALUE})")
    private int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "5", description = "all-reduces (default ${DEFAULT-VALUE})")
    private int iterations;

    @Option(names = "--loss", defaultValue = "0",
        description = "drop, duplicate and reorder rate of every endpoint, e.g. 0.01 (default ${DEFAULT-VALUE})")
    private double loss;

    @Option(names = "--slots", defaultValue = "64", description = "window of every job (default ${DEFAULT-VALUE})")
    private int slots;

    @Option(names = "--lanes", defaultValue = "256",
        description = "int32 lanes per packet (default ${DEFAULT-VALUE})")
    private int lanes;

    @Option(names = "--seed", defaultValue = "1", description = "seed of gradients and faults (default 1)")
    private long seed;

    @Option(names = "--topology",
        description = "the plan's topology file; with --p4-config, gives the switches' ports and addresses")
    private Path topologyFile;

    @Option(names = "--p4-config",
        description = "write each aggregating switch's bmv2 configuration (job tables with two-level rows, then its"
            + " multicast trees) as simple_switch_CLI commands to <dir>/<switch>.bmv2.txt; needs --topology")
    private Path p4ConfigDir;

    @Option(names = "--multicast-commands",
        description = "also write each switch's multicast trees as simple_switch_CLI commands to <dir>/<switch>.txt")
    private Path multicastDir;

    /** The controller's plan for --topology ({@code POST /v1/plans}), as the plan file's text. */
    private String planFromController() throws java.io.IOException, InterruptedException {
        if (topologyFile == null) {
            throw new IllegalArgumentException("--controller plans the --topology FILE; give it");
        }
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode body = json.createObjectNode();
        body.set("topology", json.readTree(Files.readString(topologyFile)));
        String base = controller.contains("://") ? controller : "http://" + controller;
        java.net.URI uri = java.net.URI.create(base.endsWith("/") ? base + "v1/plans" : base + "/v1/plans");
        try (java.net.http.HttpClient client = java.net.http.HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5)).build()) {
            java.net.http.HttpRequest.Builder request = java.net.http.HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(300)).header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body)));
            // The controller's shared secret, as every inagg client sends it (docs/controller.md, "Tokens").
            String token = System.getenv("INAGG_TOKEN");
            if (token != null && !token.isBlank()) {
                request.header("Authorization", "Bearer " + token.strip());
            }
            java.net.http.HttpResponse<String> answer = client.send(request.build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() != 200) {
                throw new IllegalStateException("controller " + uri + " refused to plan " + topologyFile + " ("
                    + answer.statusCode() + "): " + answer.body());
            }
            System.out.printf("plan from controller %s for %s%n", base, topologyFile);
            return answer.body();
        }
    }

    @Override
    public Integer call() throws Exception {
        if (elements < 1 || iterations < 1 || !(loss >= 0 && loss < 1)) {
            throw new IllegalArgumentException("--elements and --iterations must be positive and --loss in [0, 1)");
        }
        if ((planFile == null) == (controller == null)) {
            throw new IllegalArgumentException("give --plan FILE, or --controller URL with --topology FILE");
        }
        InaPlan plan = PlanJson.read(controller != null ? planFromController() : Files.readString(planFile));
        PlanDeployment.Settings settings = new PlanDeployment.Settings(slots, lanes);
        PlanDeployment deployment = PlanDeployment.of(plan, settings);
        System.out.print(deployment);
        if (p4ConfigDir != null) {
            if (topologyFile == null) {
                throw new IllegalArgumentException("--p4-config needs --topology (the switches' ports come from it)");
            }
            Files.createDirectories(p4ConfigDir);
            Map<String, JobTable> tables = deployment.p4JobTables(TopologyJson.read(topologyFile));
            for (Map.Entry<String, JobTable> table : tables.entrySet()) {
                List<String> commands = new ArrayList<>(table.getValue().simpleSwitchCommands());
                int nodes = (int)commands.stream().filter(c -> c.startsWith("mc_node_create ")).count();
                commands.addAll(deployment.multicastCommands(table.getKey(), 1000, nodes));
                Files.write(p4ConfigDir.resolve(table.getKey() + ".bmv2.txt"), commands);
            }
            System.out.printf("bmv2 configuration written for %d switches to %s%n", tables.size(), p4ConfigDir);
        }
        if (multicastDir != null) {
            Files.createDirectories(multicastDir);
            Set<String> nodes = new TreeSet<>();
            plan.multicastTrees().forEach(tree -> nodes.addAll(tree.ports().keySet()));
            for (String node : nodes) {
                List<String> commands = deployment.multicastCommands(node, 1000, 0);
                Files.write(multicastDir.resolve(node + ".txt"), commands);
            }
            System.out.printf("multicast trees (groups 1000..) written for %d nodes to %s%n", nodes.size(),
                multicastDir);
        }
        int workers = deployment.workers().size();
        Duration peerTimeout = Duration.ofSeconds(30);
        Random random = new Random(seed);
        double[] plannedMs = new double[iterations];
        double[] flatMs = new double[iterations];
        boolean identical = true;
        try (InProcessPlanCluster planned = InProcessPlanCluster.deploy(deployment, loss, seed, peerTimeout);
             InProcessPlanCluster flat = InProcessPlanCluster.flat(workers, settings, loss, seed, peerTimeout)) {
            for (int it = 0; it < iterations; it++) {
                float[][] a = new float[workers][elements];
                for (float[] tensor : a) {
                    for (int k = 0; k < elements; k++) {
                        tensor[k] = (float)random.nextGaussian();
                    }
                }
                float[][] b = new float[workers][];
                for (int w = 0; w < workers; w++) {
                    b[w] = a[w].clone();
                }
                long t0 = System.nanoTime();
                planned.allReduce(a);
                long t1 = System.nanoTime();
                flat.allReduce(b);
                long t2 = System.nanoTime();
                plannedMs[it] = (t1 - t0) / 1e6;
                flatMs[it] = (t2 - t1) / 1e6;
                int mismatches = 0;
                for (int w = 0; w < workers; w++) {
                    for (int k = 0; k < elements; k++) {
                        if (Float.floatToRawIntBits(a[w][k]) != Float.floatToRawIntBits(b[w][k])) {
                            mismatches++;
                        }
                    }
                }
                identical &= mismatches == 0;
                System.out.printf("iteration %d/%d: planned %.1f ms, flat %.1f ms, %d elements differ%n", it + 1,
                    iterations, (t1 - t0) / 1e6, (t2 - t1) / 1e6, mismatches);
            }
            for (String sw : planned.switchIds()) {
                System.out.printf("switch %s: %d contributions, %d partials up, %d forwarded to the PS, %d dropped"
                        + " duplicates%n", sw, planned.switchCounter(sw, SwitchCounter.CONTRIBUTIONS),
                    planned.switchCounter(sw, SwitchCounter.UPSTREAM_PARTIALS),
                    planned.switchCounter(sw, SwitchCounter.UPSTREAM_FORWARDS),
                    planned.switchCounter(sw, SwitchCounter.DUPLICATES));
            }
            for (String ps : planned.serverIds()) {
                System.out.printf("PS %s: %d partials and %d raw contributions merged, %d blocks completed, %d"
                        + " retransmissions answered%n", ps, planned.serverCounter(ps, ServerCounter.PARTIALS_MERGED),
                    planned.serverCounter(ps, ServerCounter.RAW_MERGED),
                    planned.serverCounter(ps, ServerCounter.COMPLETED),
                    planned.serverCounter(ps, ServerCounter.RETRANSMIT_REPLIES));
            }
        }
        // The first iteration includes JIT compilation: the summary is the median of the others.
        int from = iterations > 1 ? 1 : 0;
        double planned = median(plannedMs, from);
        double flatMedian = median(flatMs, from);
        System.out.printf("median of iterations %d..%d: planned %.1f ms (%.3e elements/s per worker), flat %.1f ms"
                + " (%.3e); planned/flat time %.2f (one thread runs every node)%n", from + 1, iterations, planned,
            elements / planned * 1e3, flatMedian, elements / flatMedian * 1e3, planned / flatMedian);
        System.out.println(identical ? "results: bit-identical to the flat all-reduce"
            : "results: DIFFER from the flat all-reduce");
        return identical ? 0 : 1;
    }

    private static double median(double[] values, int from) {
        double[] sorted = Arrays.copyOfRange(values, from, values.length);
        Arrays.sort(sorted);
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2]
            : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }
}
