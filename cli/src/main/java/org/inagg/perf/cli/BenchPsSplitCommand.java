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
import org.inagg.perf.peers.LinkBounds;
import org.inagg.perf.peers.ParameterServerSplitBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code inagg bench-ps-split}: InArt's seed measured ({@link ParameterServerSplitBench}): two-level aggregation with
 * the tensor split between K parameter servers, each behind its own rate-limited link, on an emulated cluster of
 * W + max(K) hosts.
 */
@Command(name = "bench-ps-split", mixinStandardHelpOptions = true,
    description = "Two-level aggregation with the tensor split between K parameter servers (InArt's seed, "
        + "docs/reproductions.md), each on its own link of --ps-rate, against one: an emulated cluster (root).")
public final class BenchPsSplitCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--workers", defaultValue = "3", description = "Workers, one host each (default ${DEFAULT-VALUE}).")
    private int workers;

    @Option(names = {"-n", "--elements"}, defaultValue = "1048576",
        description = "The tensor, float32 (default ${DEFAULT-VALUE}).")
    private int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "5",
        description = "Timed all-reduces (default ${DEFAULT-VALUE}).")
    private int iterations;

    @Option(names = "--warmup", defaultValue = "1",
        description = "Untimed all-reduces first (default ${DEFAULT-VALUE}).")
    private int warmup;

    @Option(names = "--servers", split = ",", defaultValue = "1,2",
        description = "Parameter server counts to compare, each splitting the tensor evenly "
            + "(default ${DEFAULT-VALUE}).")
    private List<Integer> servers;

    @Option(names = "--link-rate", required = true, paramLabel = "RATE", description = "The workers' links (tc tbf).")
    private String linkRate;

    @Option(names = "--ps-rate", paramLabel = "RATE",
        description = "Each parameter server's link (default: --link-rate).")
    private String psRate;

    @Option(names = "--results-down", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Each server sends a result once to the switch, which multicasts it to its workers (the "
            + "default of inagg switch --upstream); --no-results-down: the server answers every worker itself.")
    private boolean resultsDown;

    @Mixin
    private SeedBenchOptions bench;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final int most = servers.stream().mapToInt(Integer::intValue).max().orElse(0);
        bench.validate();
        if (servers.stream().anyMatch(k -> k < 1 || k > 8))
        {
            throw new IllegalArgumentException("--servers must be 1..8 each, not " + servers);
        }
        final LinkRate hostRate = LinkRate.parse(linkRate);
        final LinkRate serverRate = psRate == null ? hostRate : LinkRate.parse(psRate);
        final Path work = bench.workFolder("inagg-bench-ps-split-");
        new ParameterServerSplitBench.Settings(org.inagg.perf.peers.Placement.LOOPBACK, workers, elements, iterations,
            warmup, work, bench.timeoutS, bench.jvmOptions, resultsDown); // validates before any namespace
        final Map<Integer, LinkRate> perHost = new LinkedHashMap<>();
        for (int k = 1; k <= most; k++)
        {
            perHost.put(workers + k, serverRate);
        }
        final EmulatedCluster cluster = EmulatedCluster.create(workers + most, hostRate, perHost, 1500,
            EmulatedCluster.QUEUE_MS_DEFAULT);
        final Thread cleanup = new Thread(cluster::close, "inagg-bench-ps-split-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try
        {
            final long bytes = 4L * elements;
            // a server's link carries its share up once (the switch's partial) and down once with results down the
            // tree, W times without (it answers every worker itself); a host link carries S each way
            final double oneServer = iterations * (resultsDown ? 1 : workers) * LinkBounds.inaSeconds(bytes, 256,
                serverRate.bitsPerSecond());
            final double host = iterations * LinkBounds.inaSeconds(bytes, 256, hostRate.bitsPerSecond());
            out.printf(Locale.ROOT, "bench-ps-split: %s (workers on hosts 1-%d, parameter server k on host %d+k, links "
                + "%s); %d x %,d elements; logs in %s%n", cluster.describe(), workers, workers, serverRate, iterations,
                elements, work);
            out.printf(Locale.ROOT, "load average before: %s%n", SeedBenchOptions.loadAverage());
            out.flush();
            final List<ParameterServerSplitBench.Result> results = new ParameterServerSplitBench(
                new ParameterServerSplitBench.Settings(cluster.placement(), workers, elements, iterations, warmup,
                    work, bench.timeoutS, bench.jvmOptions, resultsDown)).run(servers, bench.rounds);
            out.printf(Locale.ROOT, "load average after: %s%n", SeedBenchOptions.loadAverage());
            out.print(ParameterServerSplitBench.table(results, oneServer, host));
            out.flush();
            return results.stream().allMatch(ParameterServerSplitBench.Result::ok) ? 0 : 1;
        }
        finally
        {
            cluster.close();
            Runtime.getRuntime().removeShutdownHook(cleanup);
            out.println("bench-ps-split: cluster removed (" + cluster.remainingNamespaces().size()
                + " namespaces left)");
            out.flush();
        }
    }
}
