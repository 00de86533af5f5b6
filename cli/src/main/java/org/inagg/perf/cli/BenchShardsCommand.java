package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.inagg.perf.peers.PeerResult;
import org.inagg.perf.peers.ShardScalingBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code inagg bench-shards}: the software switch's shards against one thread ({@link ShardScalingBench}), every job
 * count with every shard count, rounds alternated so that a machine's drift falls on both alike.
 */
@Command(name = "bench-shards", mixinStandardHelpOptions = true,
    description = "How inagg switch --shards scales: J jobs of W worker processes at once on one switch on loopback, "
        + "for each shard count; each job's p50 per all-reduce, their throughput together, the switch's CPU, "
        + "and the ratio to the first shard count in the same round (docs/performance.md).")
public final class BenchShardsCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--jobs", split = ",", defaultValue = "2",
        description = "Job counts, comma separated; job ids 1..J (default ${DEFAULT-VALUE}).")
    private List<Integer> jobs;

    @Option(names = {"-w", "--workers"}, defaultValue = "2",
        description = "Worker processes per job (default ${DEFAULT-VALUE}).")
    private int workers;

    @Option(names = "--shards", split = ",", defaultValue = "1,2",
        description = "Shard counts, comma separated; the first is the baseline (default ${DEFAULT-VALUE}).")
    private List<Integer> shards;

    @Option(names = {"-n", "--elements"}, defaultValue = "1048576",
        description = "float32 elements per tensor (default ${DEFAULT-VALUE}).")
    private int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "20",
        description = "Timed all-reduces per job (default ${DEFAULT-VALUE}).")
    private int iterations;

    @Option(names = "--warmup", defaultValue = "10",
        description = "Untimed all-reduces per job first (default ${DEFAULT-VALUE}).")
    private int warmup;

    @Option(names = "--worker-option", description = "Extra inagg worker option, repeatable.")
    private List<String> workerOptions = new ArrayList<>();

    /** --rounds, --timeout-s, --work-dir, --jvm-option. */
    @Mixin
    private SeedBenchOptions bench;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        if (jobs.stream().anyMatch(j -> j < 1 || j > 64) || shards.stream().anyMatch(s -> s < 1 || s > 64))
        {
            throw new IllegalArgumentException("--jobs and --shards take counts in 1..64, got " + jobs + " and "
                + shards);
        }
        if (workers < 1 || elements < 1 || iterations < 1 || warmup < 0)
        {
            throw new IllegalArgumentException("-w, -n and -i must be positive and --warmup not negative");
        }
        bench.validate();
        final Path dir = bench.workFolder("inagg-bench-shards");
        out.printf(Locale.ROOT, "bench-shards: %,d float32 x %d all-reduces (warmup %d), %s jobs of %d workers, "
            + "shards %s, %d rounds, %d cores; logs in %s%n", elements, iterations, warmup, jobs, workers, shards,
            bench.rounds, Runtime.getRuntime().availableProcessors(), dir);
        out.flush();
        final ShardScalingBench runs = new ShardScalingBench(bench.jvmOptions, workerOptions);
        final List<String> table = new ArrayList<>();
        table.add("| round | jobs | shards | each job's p50 ms | elements/s together | x first shard count "
            + "| switch CPU s (JIT included) |");
        table.add("|---:|---:|---:|---|---:|---:|---:|");
        boolean failed = false;
        for (int round = 1; round <= bench.rounds; round++)
        {
            for (final int jobCount : jobs)
            {
                double baseline = Double.NaN;
                boolean first = true;
                for (final int shardCount : shards)
                {
                    final ShardScalingBench.Row row = runs.run(jobCount, workers, shardCount, elements, iterations,
                        warmup, bench.timeoutS, dir);
                    final boolean isBaseline = first;
                    first = false;
                    if (!row.isMeasured())
                    {
                        failed = true;
                        out.printf(Locale.ROOT, "  round %d, %d jobs, %d shards: FAILED: %s%n", round, jobCount,
                            shardCount, row.failure());
                        out.flush();
                        continue;
                    }
                    if (isBaseline)
                    {
                        baseline = row.elementsPerSecond();
                    }
                    final String p50s = String.join(" / ", row.perJob().stream().map(PeerResult::p50Seconds)
                        .map(p50 -> String.format(Locale.ROOT, "%.1f", p50 * 1e3)).toList());
                    // A failed baseline leaves the ratios of its round n/a rather than taking another's run.
                    final String line = String.format(Locale.ROOT, "| %d | %d | %d | %s | %.3e | %s | %.2f |",
                        round, jobCount, shardCount, p50s, row.elementsPerSecond(), Double.isNaN(baseline) ? "n/a"
                        : String.format(Locale.ROOT, "%.2fx", row.elementsPerSecond() / baseline),
                        row.switchCpuSeconds());
                    table.add(line);
                    out.printf(Locale.ROOT, "  round %d, %d jobs, %d shards: %.3e elements/s together, p50 %s ms, "
                        + "switch CPU %.2f s; %s%n", round, jobCount, shardCount,
                        row.elementsPerSecond(), p50s, row.switchCpuSeconds(),
                        row.perJob().get(0).note());
                    out.flush();
                }
            }
        }
        out.println();
        table.forEach(out::println);
        out.flush();
        return failed ? 1 : 0;
    }
}
