package org.inagg.control.cli;

import org.inagg.control.aggregation.AggregationProblem;
import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.IntegralOptimum;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.esa.AllocationPolicy;
import org.inagg.control.esa.ContentionResult;
import org.inagg.control.esa.ContentionSettings;
import org.inagg.control.esa.EsaJob;
import org.inagg.control.esa.EsaScenarios;
import org.inagg.control.grid.GridPlanner;
import org.inagg.control.inart.InArtPlanner;
import org.inagg.control.inart.InArtResult;
import org.inagg.control.inart.SplitMethod;
import org.inagg.control.multicast.LinkReservations;
import org.inagg.control.multicast.MulticastScenarios;
import org.inagg.control.multicast.PathAwareMulticast;
import org.inagg.control.passing.ClusterSpec;
import org.inagg.control.passing.PassingCostModel;
import org.inagg.control.passing.SyncStrategy;
import org.inagg.control.sim.PlanSimulation;
import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.inagg.control.topology.TopologyJson;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** Runs the papers' scenarios and the scale study; prints tables, writes them and PNG charts to a folder. */
@Command(name = "simulate", mixinStandardHelpOptions = true,
    description = "Runs a scenario: grid, inart, esa, multicast, passing, scale or all; or, with --topology,"
        + " every scheme on a topology file.")
public final class SimulateCommand implements Callable<Integer> {

    @Option(names = "--scenario", defaultValue = "all", description = "grid|inart|esa|multicast|passing|scale|all")
    private String scenario;

    @Option(names = "--out", defaultValue = "control-results", description = "folder for tables and charts")
    private Path out;

    @Option(names = "--max-workers", defaultValue = "10000", description = "largest size of the scale study")
    private int maxWorkers;

    @Option(names = "--topology",
        description = "a topology file: runs scenario 'topology' (every scheme on it) instead of the papers'")
    private Path topologyFile;

    @Option(names = "--model-gigabits", defaultValue = "8",
        description = "gradient size for push and distribution times (default ${DEFAULT-VALUE})")
    private double modelGigabits;

    private final StringBuilder report = new StringBuilder();

    @Override
    public Integer call() throws Exception {
        Files.createDirectories(out);
        if (topologyFile != null) {
            scenario = "topology";
        }
        List<String> run = scenario.equals("all")
            ? List.of("grid", "inart", "esa", "multicast", "passing", "scale") : List.of(scenario);
        for (String name : run) {
            switch (name) {
                case "grid" -> grid();
                case "inart" -> inart();
                case "esa" -> esa();
                case "multicast" -> multicast();
                case "passing" -> passing();
                case "scale" -> scale();
                case "topology" -> topology();
                default -> throw new IllegalArgumentException("unknown scenario " + name);
            }
        }
        Files.writeString(out.resolve("report-" + scenario + ".md"), report.toString());
        return 0;
    }

    private void line(String format, Object... args) {
        String text = String.format(Locale.ROOT, format, args);
        System.out.println(text);
        report.append(text).append('\n');
    }

    /** Every scheme on the user's topology: rates, simulated push time, multicast against unicast. */
    private void topology() {
        if (topologyFile == null) {
            throw new IllegalArgumentException("scenario 'topology' needs --topology FILE");
        }
        Topology topology = TopologyJson.read(topologyFile);
        int[] servers = topology.parameterServers();
        line("## %s: %d workers, %d PS, %d switches", topology.name(), topology.workers().length, servers.length,
            topology.switches().length);
        line("| scheme | rate Gb/s | LP bound | push of %.1f Gb, s (baselines: size/rate; plan: flow simulation) |",
            modelGigabits);
        line("|---|---|---|---|");
        InArtPlanner planner = InArtPlanner.forSmallNetworks();
        Map<String, Double> rates = new LinkedHashMap<>();
        for (RoutingScheme scheme : List.of(RoutingScheme.NO_INA, RoutingScheme.SWITCHML, RoutingScheme.ATP)) {
            double rate = planner.baseline(topology, scheme, servers).rateGbps();
            line("| %s | %.6f | (splits per packet) | %.6f |", scheme, rate, modelGigabits / rate);
            rates.put(scheme.name(), rate);
        }
        InArtResult result = planner.plan(topology, SplitMethod.EXACT_LP);
        String name = servers.length == 1 ? "GRID" : "InArt";
        line("| %s | %.6f | %.6f | %.6f |", name, result.rateGbps(), result.routing().fractional().rateGbps(),
            PlanSimulation.pushSeconds(result.routing().best(), modelGigabits));
        rates.put(name, result.rateGbps());
        line("split %s, %d capacity violations at the LP rate", format(result.split()),
            result.routing().violations().size());
        for (int j = 0; j < servers.length; j++) {
            double multicast = MulticastScenarios.multicastSeconds(topology, List.of(
                new PathAwareMulticast(new LinkReservations(topology))
                    .reserveBestEffort(servers[j], topology.workers(), 0)), modelGigabits * result.split()[j]);
            double unicast = MulticastScenarios.unicastSeconds(topology, servers[j], topology.workers(),
                modelGigabits * result.split()[j], new java.util.Random(1));
            line("distribution from %s: unicast %.6f s, path-aware multicast %.6f s (%.3fx)",
                topology.node(servers[j]).id(), unicast, multicast, unicast / multicast);
        }
        Charts.bars(out.resolve("topology-rates"), topology.name() + ": common worker rate", "Gb/s", rates);
        line("");
    }

    private void grid() {
        line("## GRID example (1 PS, 8 workers, 3 Gb/s links)");
        Topology example = Topologies.gridExample();
        GridPlanner small = GridPlanner.forSmallNetworks();
        RandomizedRounding.RoundingResult plan = small.plan(example);
        AggregationProblem problem = AggregationProblem.build(example, RoutingScheme.ROUTE_SELECTION,
            CandidateSettings.smallNetworks());
        line("no INA %.6f | ATP %.6f | SwitchML %.6f | GRID LP %.6f, rounded %.6f (best draw %.6f), MIP optimum %.6f",
            small.baseline(example, RoutingScheme.NO_INA).rateGbps(),
            small.baseline(example, RoutingScheme.ATP).rateGbps(),
            small.baseline(example, RoutingScheme.SWITCHML).rateGbps(), plan.fractional().rateGbps(),
            plan.rateGbps(), plan.bestDrawRate(), IntegralOptimum.rateGbps(problem, new double[] {1}));
        line("");
        line("## GRID on k=8 fat-trees, 100 workers, 1 PS, 20%% programmable switches (800 Gb/s), 100 Gb/s links");
        line("| seed | no INA | SwitchML | ATP | GRID (LP bound) | GRID rounded |");
        line("|---|---|---|---|---|---|");
        Map<String, Double> mean = new LinkedHashMap<>();
        GridPlanner fabric = GridPlanner.forFabrics();
        int seeds = 5;
        for (long seed = 1; seed <= seeds; seed++) {
            Topology tree = Topologies.fatTree(8, 100, 1, FabricSpec.uniform100G().withProgrammableFraction(0.2)
                .withAggregationGbps(800).withSeed(seed));
            double noIna = fabric.baseline(tree, RoutingScheme.NO_INA).rateGbps();
            double switchMl = fabric.baseline(tree, RoutingScheme.SWITCHML).rateGbps();
            double atp = fabric.baseline(tree, RoutingScheme.ATP).rateGbps();
            RandomizedRounding.RoundingResult grid = fabric.plan(tree);
            line("| %d | %.3f | %.3f | %.3f | %.3f | %.3f |", seed, noIna, switchMl, atp,
                grid.fractional().rateGbps(), grid.rateGbps());
            mean.merge("no INA", noIna / seeds, Double::sum);
            mean.merge("SwitchML", switchMl / seeds, Double::sum);
            mean.merge("ATP", atp / seeds, Double::sum);
            mean.merge("GRID", grid.rateGbps() / seeds, Double::sum);
        }
        Charts.bars(out.resolve("grid-fattree"), "GRID, k=8 fat-tree, mean min rate", "Gb/s", mean);
        line("");
    }

    private void inart() {
        line("## InArt example (2 PS, 6 workers, 2 switches)");
        Topology example = Topologies.inartExample();
        InArtPlanner small = InArtPlanner.forSmallNetworks();
        InArtResult fixed = small.planWithSplit(example, new double[] {0.6, 0.4});
        InArtResult best = small.plan(example, SplitMethod.EXACT_LP);
        InArtResult lagrangian = small.plan(example, SplitMethod.LAGRANGIAN);
        int[] ps = example.parameterServers();
        line("split (0.6,0.4): rounded %.6f (LP %.6f) | best split %s: rounded %.6f (LP %.6f) | Lagrangian split %s:"
                + " %.6f", fixed.rateGbps(), fixed.routing().fractional().rateGbps(), Arrays.toString(best.split()),
            best.rateGbps(), best.routing().fractional().rateGbps(), Arrays.toString(lagrangian.split()),
            lagrangian.rateGbps());
        line("no INA, load-balanced, 2 PS: %.6f | ATP on one PS: %.6f | ATP on 2 PS with fallback: %.6f",
            small.baseline(example, RoutingScheme.NO_INA, ps).rateGbps(),
            small.baseline(example, RoutingScheme.ATP, new int[] {ps[0]}).rateGbps(),
            small.baseline(example, RoutingScheme.ATP, ps).rateGbps());
        line("");
        line("## InArt on k=6 fat-trees, 50 workers, 4 PS, half the switches programmable, background load up to 60%%");
        line("| seed | InArt rate | split | ATP 1 PS | ATP 4 PS | time vs ATP 1 PS | time vs ATP 4 PS |");
        line("|---|---|---|---|---|---|---|");
        Map<String, Double> reductions = new LinkedHashMap<>();
        InArtPlanner fabric = InArtPlanner.forFabrics();
        for (long seed = 1; seed <= 5; seed++) {
            Topology tree = Topologies.fatTree(6, 50, 4, FabricSpec.uniform100G().withProgrammableFraction(0.5)
                .withBackgroundLoadMax(0.6).withAggregationGbps(800).withSeed(seed));
            InArtResult result = fabric.plan(tree, SplitMethod.EXACT_LP);
            int[] servers = tree.parameterServers();
            double atpOne = fabric.baseline(tree, RoutingScheme.ATP, new int[] {servers[0]}).rateGbps();
            double atpAll = fabric.baseline(tree, RoutingScheme.ATP, servers).rateGbps();
            double vsOne = 1 - atpOne / result.rateGbps();
            double vsAll = 1 - atpAll / result.rateGbps();
            line("| %d | %.3f | %s | %.3f | %.3f | -%.1f%% | -%.1f%% |", seed, result.rateGbps(),
                format(result.split()), atpOne, atpAll, 100 * vsOne, 100 * vsAll);
            reductions.put("seed " + seed + " vs ATP-1PS", 100 * vsOne);
            reductions.put("seed " + seed + " vs ATP-4PS", 100 * vsAll);
        }
        Charts.bars(out.resolve("inart-fattree"), "InArt: communication time reduction", "%", reductions);
        line("");
    }

    private void esa() {
        line("## ESA: 8 mixed jobs sharing one switch (RTT 10 ticks, skew up to 20 ticks, 256 B chunks)");
        line("| slots | SwitchML JCT | ATP JCT | ESA JCT | ATP/ESA | SwitchML/ESA | fallback MB SwitchML/ATP/ESA |");
        line("|---|---|---|---|---|---|---|");
        List<EsaJob> jobs = EsaScenarios.mixedJobs(8, 1);
        Map<String, Double> ratio = new LinkedHashMap<>();
        for (int slots : new int[] {32, 64, 128, 256, 1024}) {
            Map<AllocationPolicy, ContentionResult> results = EsaScenarios.compare(
                new ContentionSettings(slots, 10, 20, 256, 1), jobs);
            double staticJct = results.get(AllocationPolicy.STATIC_PARTITION).averageCompletionTicks();
            double atp = results.get(AllocationPolicy.DEALLOCATE_ON_ACK).averageCompletionTicks();
            double esa = results.get(AllocationPolicy.PREEMPTIVE_PRIORITY).averageCompletionTicks();
            line("| %d | %.0f | %.0f | %.0f | %.3f | %.3f | %.1f / %.1f / %.1f |", slots, staticJct, atp, esa,
                atp / esa, staticJct / esa,
                results.get(AllocationPolicy.STATIC_PARTITION).fallbackBytes() / 1e6,
                results.get(AllocationPolicy.DEALLOCATE_ON_ACK).fallbackBytes() / 1e6,
                results.get(AllocationPolicy.PREEMPTIVE_PRIORITY).fallbackBytes() / 1e6);
            ratio.put(slots + " slots ATP/ESA", atp / esa);
        }
        Charts.bars(out.resolve("esa-jct"), "ESA: average JCT of ATP over ESA", "ratio", ratio);
        line("");
    }

    private void multicast() {
        line("## Path-aware multicast on an 8x8 spine-leaf, 100 Gb/s links, 8 Gb per round");
        line("1 PS to 7 workers on 7 other leaves: unicast/multicast = %.6f",
            MulticastScenarios.singleSenderSpeedup(8));
        double[] collide = MulticastScenarios.collidingSenders(8);
        line("2 PSs, random trees colliding on a spine: %.4f s, path-aware: %.4f s, speedup %.6f", collide[0],
            collide[1], collide[0] / collide[1]);
        line("| jobs | CV random (one spine per tree) | CV path-aware | improvement | CV random (per-branch) |"
            + " improvement over per-branch |");
        line("|---|---|---|---|---|---|");
        Map<String, Double> improvement = new LinkedHashMap<>();
        for (int jobs : new int[] {8, 16, 32, 64}) {
            double random = 0;
            double aware = 0;
            double gain = 0;
            double branchRandom = 0;
            double branchGain = 0;
            for (long seed = 1; seed <= 10; seed++) {
                double[] cv = MulticastScenarios.loadBalance(jobs, 7, 10, seed);
                random += cv[0] / 10;
                aware += cv[1] / 10;
                gain += (1 - cv[1] / cv[0]) / 10;
                double[] branch = MulticastScenarios.loadBalance(MulticastScenarios.spineLeaf8x8(0), jobs, 7, 10,
                    seed, 1, true);
                branchRandom += branch[0] / 10;
                branchGain += (1 - branch[1] / branch[0]) / 10;
            }
            line("| %d | %.3f | %.3f | %.1f%% | %.3f | %.1f%% |", jobs, random, aware, 100 * gain, branchRandom,
                100 * branchGain);
            improvement.put(jobs + " jobs", 100 * gain);
        }
        Charts.bars(out.resolve("multicast-balance"), "Path-aware vs random multicast: CV improvement", "%",
            improvement);
        line("");
    }

    private void passing() {
        ClusterSpec cluster = ClusterSpec.paperLike();
        line("## PASSING cost model: %d hosts x %d GPUs, %.0f GB/s in host, %.0f Gb/s NIC, %.0f Gb/s switch",
            cluster.hosts(), cluster.gpusPerHost(), cluster.inHostGBps(), cluster.nicGbps(),
            cluster.switchAggregationGbps());
        line("| model | flat ring | hierarchical ring | per-GPU INA | PASSING | speedup vs best baseline | vs worst |");
        line("|---|---|---|---|---|---|---|");
        Map<String, Double> times = new LinkedHashMap<>();
        for (Object[] model : new Object[][] {{"VGG19", PassingCostModel.VGG19_BYTES},
            {"ResNet-50", PassingCostModel.RESNET50_BYTES}}) {
            double bytes = (Double) model[1];
            Map<SyncStrategy, Double> all = PassingCostModel.all(cluster, bytes);
            double passing = all.get(SyncStrategy.PASSING);
            double bestBaseline = Double.MAX_VALUE;
            double worstBaseline = 0;
            for (var entry : all.entrySet()) {
                times.put(model[0] + " " + entry.getKey(), entry.getValue() * 1000);
                if (entry.getKey() != SyncStrategy.PASSING) {
                    bestBaseline = Math.min(bestBaseline, entry.getValue());
                    worstBaseline = Math.max(worstBaseline, entry.getValue());
                }
            }
            line("| %s | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.3fx | %.3fx |", model[0],
                all.get(SyncStrategy.FLAT_RING) * 1000, all.get(SyncStrategy.HIERARCHICAL_RING) * 1000,
                all.get(SyncStrategy.PER_GPU_INA) * 1000, passing * 1000, bestBaseline / passing,
                worstBaseline / passing);
        }
        Charts.bars(out.resolve("passing-times"), "PASSING: synchronisation time", "ms", times);
        line("");
    }

    private void scale() {
        line("## Scale: planning and simulation time vs workers (spine-leaf, 16 spines, 40 workers per leaf, "
            + "20%% programmable, 100 Gb/s)");
        line("Times in seconds on this machine, after one warm-up pass at 100 workers (JIT).");
        line("| workers | GRID plan | GRID LP vars/rows | GRID push sim | InArt (4 PS) plan | ATP LP | ESA sim "
            + "(workers/100 jobs) | multicast (workers/8 trees) | PASSING |");
        line("|---|---|---|---|---|---|---|---|---|");
        scaleRow(100, false);
        List<Double> sizes = new ArrayList<>();
        Map<String, List<Double>> series = new LinkedHashMap<>();
        for (int workers : new int[] {100, 300, 1000, 3000, 10_000, 30_000}) {
            if (workers > maxWorkers) {
                break;
            }
            double[] times = scaleRow(workers, true);
            sizes.add((double) workers);
            String[] names = {"GRID plan", "GRID push sim", "InArt plan", "ATP LP", "ESA sim", "multicast"};
            for (int i = 0; i < names.length; i++) {
                series.computeIfAbsent(names[i], k -> new ArrayList<>()).add(Math.max(1e-4, times[i]));
            }
        }
        Map<String, double[]> arrays = new LinkedHashMap<>();
        series.forEach((k, v) -> arrays.put(k, v.stream().mapToDouble(Double::doubleValue).toArray()));
        Charts.lines(out.resolve("scale"), "Planning / simulation time vs workers", "workers", "seconds",
            sizes.stream().mapToDouble(Double::doubleValue).toArray(), arrays);
        line("");
    }

    private double[] scaleRow(int workers, boolean print) {
        FabricSpec spec = FabricSpec.uniform100G().withProgrammableFraction(0.2).withAggregationGbps(1600);
        int leaves = workers / 40 + 1;
        Topology one = Topologies.spineLeaf(16, leaves, 40, workers, 1, spec);
        Topology four = Topologies.spineLeaf(16, leaves, 40, workers, 4, spec);
        CandidateSettings candidates = new CandidateSettings(0, 2, 7);
        long t0 = System.nanoTime();
        RandomizedRounding.RoundingResult grid = new GridPlanner(candidates, 8, 1).plan(one);
        double gridPlan = seconds(t0);
        t0 = System.nanoTime();
        PlanSimulation.pushSeconds(grid.best(), 8);
        double gridSim = seconds(t0);
        t0 = System.nanoTime();
        new InArtPlanner(candidates, 8, 1).plan(four, SplitMethod.EXACT_LP);
        double inartPlan = seconds(t0);
        t0 = System.nanoTime();
        new GridPlanner(candidates, 8, 1).baseline(one, RoutingScheme.ATP);
        double atp = seconds(t0);
        t0 = System.nanoTime();
        List<EsaJob> jobs = new ArrayList<>();
        for (int j = 0; j < Math.max(1, workers / 100); j++) {
            jobs.add(new EsaJob(100, 500, 3, 300, 10L * j));
        }
        runEsa(jobs);
        double esa = seconds(t0);
        t0 = System.nanoTime();
        Topology hosts = Topologies.spineLeaf(16, Math.max(9, leaves), 1, workers, 0, spec);
        MulticastScenarios.loadBalance(hosts, workers / 8, 7, 10, 1, 1);
        double multicast = seconds(t0);
        t0 = System.nanoTime();
        PassingCostModel.all(new ClusterSpec(Math.max(2, workers / 8), 8, 300, 100, 6400),
            PassingCostModel.VGG19_BYTES);
        double passing = seconds(t0);
        if (print) {
            line("| %d | %.3f | %d/%d | %.3f | %.3f | %.3f | %.3f | %.3f | %.6f |", workers, gridPlan,
                grid.fractional().variables(), grid.fractional().rows(), gridSim, inartPlan, atp, esa, multicast,
                passing);
        }
        return new double[] {gridPlan, gridSim, inartPlan, atp, esa, multicast};
    }

    private static void runEsa(List<EsaJob> jobs) {
        org.inagg.control.esa.MemoryContentionSimulator.run(AllocationPolicy.PREEMPTIVE_PRIORITY,
            new ContentionSettings(Math.max(64, jobs.size() * 16), 10, 20, 256, 1), jobs);
    }

    private static double seconds(long started) {
        return (System.nanoTime() - started) / 1e9;
    }

    private static String format(double[] split) {
        StringBuilder text = new StringBuilder("(");
        for (int i = 0; i < split.length; i++) {
            text.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", split[i]));
        }
        return text.append(')').toString();
    }
}
