package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import org.inagg.perf.lab.EmulatedCluster;
import org.inagg.perf.lab.LinkRate;
import org.inagg.perf.peers.EsaSharingBench;
import org.inagg.perf.peers.EsaSharingBench.Scheme;
import org.inagg.perf.peers.Placement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code inagg bench-esa}: ESA's seed measured ({@link EsaSharingBench}): a long low-priority job and a short
 * high-priority one sharing one switch's aggregators, under each way of sharing them, on loopback or on an emulated
 * cluster ({@code --link-rate}) of 2P + 1 hosts (the jobs' workers and the parameter servers' host).
 */
@Command(name = "bench-esa", mixinStandardHelpOptions = true,
    description = "Two jobs sharing one switch's aggregators (ESA's seed, docs/reproductions.md): a long low-priority "
        + "job runs, a short high-priority one arrives; each --schemes way of sharing the pool is run --rounds times "
        + "in rotating order, and each job's time (its slowest worker's) tabled. --link-rate runs it on an emulated "
        + "cluster (root).")
public final class BenchEsaCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--workers-per-job", defaultValue = "2",
        description = "Workers of each job (default ${DEFAULT-VALUE}).")
    private int workersPerJob;

    @Option(names = "--high-elements", defaultValue = "1048576",
        description = "The high-priority job's float32 tensor (default ${DEFAULT-VALUE}).")
    private int highElements;

    @Option(names = "--high-iterations", defaultValue = "3",
        description = "Its all-reduces (default ${DEFAULT-VALUE}).")
    private int highIterations;

    @Option(names = "--low-elements", defaultValue = "1048576",
        description = "The low-priority job's tensor (default ${DEFAULT-VALUE}).")
    private int lowElements;

    @Option(names = "--low-iterations", defaultValue = "12",
        description = "Its all-reduces (default ${DEFAULT-VALUE}).")
    private int lowIterations;

    @Option(names = "--aggregators", defaultValue = "32",
        description = "The switch's pool; static splits it in halves (default ${DEFAULT-VALUE}).")
    private int aggregators;

    @Option(names = "--window", defaultValue = "32",
        description = "Each worker's window on the shared pool (default ${DEFAULT-VALUE}).")
    private int window;

    @Option(names = "--warmup", defaultValue = "1",
        description = "Untimed all-reduces each worker runs first (JIT, first touch) (default ${DEFAULT-VALUE}).")
    private int warmup;

    @Option(names = "--schemes", split = ",", defaultValue = "alone,esa,esa-equal,atp,static",
        description = "Ways of sharing: esa, esa-equal, atp, static, alone (default ${DEFAULT-VALUE}).")
    private List<String> schemes;

    @Option(names = "--link-rate", paramLabel = "RATE",
        description = "Run on an emulated cluster with links of this rate (tc tbf both ways); default: loopback.")
    private String linkRate;

    @Option(names = "--ps-rate", paramLabel = "RATE",
        description = "With --link-rate: the parameter servers' host link (default: --link-rate).")
    private String psRate;

    @Mixin
    private SeedBenchOptions bench;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final List<Scheme> parsed = schemes.stream().map(Scheme::parse).toList();
        bench.validate();
        if (psRate != null && linkRate == null)
        {
            throw new IllegalArgumentException("--ps-rate needs --link-rate");
        }
        final Path work = bench.workFolder("inagg-bench-esa-");
        final EsaSharingBench.Settings probe = settings(Placement.LOOPBACK, work); // validates before any namespace
        EmulatedCluster cluster = null;
        final Thread cleanup;
        if (linkRate != null)
        {
            final Map<Integer, LinkRate> perHost = new LinkedHashMap<>();
            if (psRate != null)
            {
                perHost.put(probe.hosts(), LinkRate.parse(psRate));
            }
            cluster = EmulatedCluster.create(probe.hosts(), LinkRate.parse(linkRate), perHost, 1500,
                EmulatedCluster.QUEUE_MS_DEFAULT);
            cleanup = new Thread(cluster::close, "inagg-bench-esa-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanup);
        }
        else
        {
            cleanup = null;
        }
        try
        {
            final EsaSharingBench.Settings settings = settings(cluster == null ? Placement.LOOPBACK
                : cluster.placement(), work);
            out.printf(Locale.ROOT, "bench-esa: %s; %d workers per job; high-priority job %d x %,d elements, "
                    + "low-priority %d x %,d; pool %d aggregators, window %d; logs in %s%n",
                cluster == null ? "loopback" : cluster.describe() + " (parameter servers on host " + probe.hosts()
                    + ")", workersPerJob, highIterations, highElements, lowIterations, lowElements, aggregators,
                window, work);
            out.printf(Locale.ROOT, "load average before: %s%n", SeedBenchOptions.loadAverage());
            out.flush();
            final List<EsaSharingBench.Result> results = new EsaSharingBench(settings).run(parsed, bench.rounds);
            out.printf(Locale.ROOT, "load average after: %s%n", SeedBenchOptions.loadAverage());
            out.print(EsaSharingBench.table(results));
            out.flush();
            return results.stream().allMatch(EsaSharingBench.Result::ok) ? 0 : 1;
        }
        finally
        {
            if (cluster != null)
            {
                cluster.close();
                Runtime.getRuntime().removeShutdownHook(cleanup);
                out.println("bench-esa: cluster removed (" + cluster.remainingNamespaces().size()
                    + " namespaces left)");
                out.flush();
            }
        }
    }

    private EsaSharingBench.Settings settings(final Placement placement, final Path work)
    {
        return new EsaSharingBench.Settings(placement, workersPerJob, highElements, highIterations, lowElements,
            lowIterations, aggregators, window, warmup, work, bench.timeoutS, bench.jvmOptions);
    }
}
