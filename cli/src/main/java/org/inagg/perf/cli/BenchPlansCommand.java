package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.topology.Topology;
import org.inagg.perf.lab.LinkRate;
import org.inagg.perf.lab.TopologyFabric;
import org.inagg.perf.lab.PlanFabricBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code inagg bench-plans}: the planners' strategies deployed on a routed fabric of their own topology file
 * ({@link PlanFabricBench}, {@link TopologyFabric}), measured beside the planner's prediction.
 */
@Command(name = "bench-plans", mixinStandardHelpOptions = true,
    description = "GRID and its baselines (no INA, SwitchML, ATP), each planned on a topology file of one parameter "
        + "server, deployed as processes on a routed emulated fabric of that file (links at bandwidthGbps x "
        + "--per-gbps), measured beside the planner's rate: docs/cluster.md. Needs root.")
public final class BenchPlansCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--schemes", split = ",", defaultValue = "no-ina,atp,grid",
        description = "no-ina, switchml, atp, grid (default ${DEFAULT-VALUE}).")
    private List<String> schemes;

    @Option(names = "--shape", defaultValue = "both",
        description = "both: every link limited both ways; toward-ps: only toward the parameter server, the "
            + "planners' direction (default ${DEFAULT-VALUE}).")
    private String shape;

    @Option(names = "--slots", defaultValue = "64",
        description = "Every worker's window, the job's slots (default ${DEFAULT-VALUE}).")
    private int slots;

    @Mixin
    private FabricBenchOptions fabric;

    @Mixin
    private SeedBenchOptions bench;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        bench.validate();
        final Topology topology = fabric.topology();
        final LinkRate rate = fabric.rate();
        final TopologyFabric.Shaping shaping = switch (shape)
        {
            case "both" -> TopologyFabric.Shaping.BOTH;
            case "toward-ps" -> TopologyFabric.Shaping.TOWARD;
            default -> throw new IllegalArgumentException("--shape must be both or toward-ps, not '" + shape + "'");
        };
        final String toward = shaping == TopologyFabric.Shaping.TOWARD && topology.parameterServers().length == 1
            ? topology.node(topology.parameterServers()[0]).id() : null;
        final List<RoutingScheme> chosen = schemes.stream().map(PlanFabricBench::scheme).toList();
        final PlanFabricBench.Settings settings = new PlanFabricBench.Settings(topology, rate, shaping, chosen,
            slots, fabric.elements, fabric.iterations, fabric.warmup, bench.rounds, bench.timeoutS,
            bench.workFolder("inagg-bench-plans-"), bench.jvmOptions, fabric.workerOptions);
        PlanFabricBench.plan(topology, chosen); // refuses a topology it cannot run before any namespace
        out.printf(Locale.ROOT, "bench-plans: %s, shaped %s; %d x %,d elements; logs in %s%n", topology.name(), shape,
            fabric.iterations, fabric.elements, settings.workDir());
        final boolean ok = PlanFabricBench.run(settings, () -> TopologyFabric.create(topology, rate, 1500, fabric.queueMs,
            shaping, toward), SeedBenchOptions::loadAverage, out);
        return ok ? 0 : 1;
    }
}
