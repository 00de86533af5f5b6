package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

import org.inagg.control.topology.Topology;
import org.inagg.perf.lab.LinkRate;
import org.inagg.perf.lab.MulticastCases;
import org.inagg.perf.lab.MulticastFabricBench;
import org.inagg.perf.lab.TopologyFabric;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code inagg bench-multicast}: path-aware multicast's fabric claim measured ({@link MulticastFabricBench}): two jobs
 * at once on a routed fabric of a spine-leaf topology file, their trees drawn at random until they collide on a spine,
 * then reserved by the path-aware planner.
 */
@Command(name = "bench-multicast", mixinStandardHelpOptions = true,
    description = "Path-aware multicast (ICC 2025, docs/reproductions.md): two jobs (each a parameter server and "
        + "workers on other leaves) at once on a routed emulated fabric of a spine-leaf topology file, their "
        + "aggregation trees along the colliding random multicast trees, then along the path-aware planner's; each "
        + "job's time beside the bound of its busiest link direction: docs/cluster.md. Needs root.")
public final class BenchMulticastCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--job", required = true, paramLabel = "PS=WORKER,...",
        description = "A job: its parameter server and its workers (rank order), node ids of the file; twice.")
    private List<String> jobs;

    @Option(names = "--slots", defaultValue = "16",
        description = "Every worker's window, the job's slots (default ${DEFAULT-VALUE}: 16 frames fit the 20 ms queue "
            + "of a 10 Mbit/s link; 64 overflowed it, 35-44 %% retransmitted, and starved a job in its warm-up).")
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
        final List<MulticastCases.Job> parsed = jobs.stream().map(MulticastCases.Job::parse).toList();
        final MulticastFabricBench.Settings settings = new MulticastFabricBench.Settings(topology, parsed, rate, slots,
            fabric.elements, fabric.iterations, fabric.warmup, bench.rounds, bench.timeoutS,
            bench.workFolder("inagg-bench-multicast-"), bench.jvmOptions, fabric.workerOptions);
        MulticastFabricBench.plan(settings); // refuses bad jobs or a topology it cannot run before any namespace
        out.printf(Locale.ROOT, "bench-multicast: %s, 1 Gb/s of the file = %s; %d x %,d elements per job; logs in %s%n",
            topology.name(), rate, fabric.iterations, fabric.elements, settings.workDir());
        final AtomicReference<TopologyFabric> current = new AtomicReference<>();
        final Thread cleanup = new Thread(() ->
        {
            final TopologyFabric made = current.get();
            if (made != null)
            {
                made.close();
            }
        }, "inagg-bench-multicast-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        final List<String> left = new ArrayList<>();
        try
        {
            final boolean ok = MulticastFabricBench.run(settings, () ->
            {
                final TopologyFabric made = TopologyFabric.create(topology, rate, 1500, fabric.queueMs,
                    TopologyFabric.Shaping.BOTH, null);
                current.set(made);
                return made;
            }, SeedBenchOptions::loadAverage, out);
            return ok ? 0 : 1;
        }
        finally
        {
            final TopologyFabric made = current.get();
            if (made != null)
            {
                made.close();
                left.addAll(made.remainingNamespaces());
            }
            Runtime.getRuntime().removeShutdownHook(cleanup);
            out.println("bench-multicast: fabric removed (" + left.size() + " namespaces left)");
            out.flush();
        }
    }
}
