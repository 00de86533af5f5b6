package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
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

    @Option(names = "--topology", required = true,
        description = "Spine-leaf topology file (control/README.md), e.g. control/examples/multicast-two-spines.json.")
    private Path topologyFile;

    @Option(names = "--job", required = true, paramLabel = "PS=WORKER,...",
        description = "A job: its parameter server and its workers (rank order), node ids of the file; twice.")
    private List<String> jobs;

    @Option(names = "--per-gbps", defaultValue = "1mbit", paramLabel = "RATE",
        description = "The emulated rate of one Gb/s of the file (default ${DEFAULT-VALUE}).")
    private String perGbps;

    @Option(names = {"-n", "--elements"}, defaultValue = "262144",
        description = "float32 per worker (default ${DEFAULT-VALUE}).")
    private int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "3", description = "Timed all-reduces (default 3).")
    private int iterations;

    @Option(names = "--warmup", defaultValue = "1", description = "Untimed all-reduces first (default 1).")
    private int warmup;

    @Option(names = "--slots", defaultValue = "16",
        description = "Every worker's window, the job's slots (default ${DEFAULT-VALUE}: 16 frames fit the 20 ms queue "
            + "of a 10 Mbit/s link; 64 overflowed it, 35-44 % retransmitted, and starved a job in its warm-up).")
    private int slots;

    @Option(names = "--queue-ms", defaultValue = "20", description = "Each link's queue (default 20 ms).")
    private int queueMs;

    @Option(names = "--worker-option", description = "Extra option of every inagg worker (repeatable).")
    private List<String> workerOptions = new ArrayList<>();

    @Mixin
    private SeedBenchOptions bench;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        bench.validate();
        final Topology topology = TopologyFabric.read(topologyFile);
        final LinkRate rate = LinkRate.parse(perGbps);
        final List<MulticastCases.Job> parsed = jobs.stream().map(MulticastCases.Job::parse).toList();
        final MulticastFabricBench.Settings settings = new MulticastFabricBench.Settings(topology, parsed, rate, slots,
            elements, iterations, warmup, bench.rounds, bench.timeoutS, bench.workFolder("inagg-bench-multicast-"),
            bench.jvmOptions, workerOptions);
        MulticastFabricBench.plan(settings); // refuses bad jobs or a topology it cannot run before any namespace
        out.printf(Locale.ROOT, "bench-multicast: %s, 1 Gb/s of the file = %s; %d x %,d elements per job; logs in %s%n",
            topology.name(), rate, iterations, elements, settings.workDir());
        final AtomicReference<TopologyFabric> current = new AtomicReference<>();
        final Thread cleanup = new Thread(() ->
        {
            final TopologyFabric fabric = current.get();
            if (fabric != null)
            {
                fabric.close();
            }
        }, "inagg-bench-multicast-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        final List<String> left = new ArrayList<>();
        try
        {
            final boolean ok = MulticastFabricBench.run(settings, () ->
            {
                final TopologyFabric fabric = TopologyFabric.create(topology, rate, 1500, queueMs,
                    TopologyFabric.Shaping.BOTH, null);
                current.set(fabric);
                return fabric;
            }, SeedBenchOptions::loadAverage, out);
            return ok ? 0 : 1;
        }
        finally
        {
            final TopologyFabric fabric = current.get();
            if (fabric != null)
            {
                fabric.close();
                left.addAll(fabric.remainingNamespaces());
            }
            Runtime.getRuntime().removeShutdownHook(cleanup);
            out.println("bench-multicast: fabric removed (" + left.size() + " namespaces left)");
            out.flush();
        }
    }
}
