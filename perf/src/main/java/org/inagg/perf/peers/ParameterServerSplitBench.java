package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

/**
 * InArt's seed on real processes: two-level aggregation (a switch summing every worker, parameter servers behind it)
 * with the tensor split between K parameter servers, each on its own rate-limited link, against all of it on one.
 * Server k gets its own job: a share of the tensor's elements (split_k, InArt's phase 1), its own first-level
 * {@code inagg switch --upstream} (the switch process here serves one parameter server; K of them in the switch's
 * namespace stand for one switch whose slots are divided among the servers), and on every host one {@code inagg
 * worker} for that share. With results down the tree (the switches' default) a server sends each result once, to the
 * switch, so its link carries its share once each way; with {@code resultsDown} off it answers every worker itself
 * and its link carries W results of its share down. Either way, where that link is the bottleneck (slower than the
 * hosts', or W results on it), K servers each carry 1/K of it.
 * <p>
 * Placement (an emulated cluster of W + K hosts): worker w on rank w, parameter server k on rank W + k; the switches
 * in the switch's namespace at ports 9000 + k; a host's worker for share k binds port 9101 + k, server k 9100 + 100 k.
 */
public final class ParameterServerSplitBench
{
    /**
     * What to run.
     *
     * @param placement  an emulated cluster of at least {@code workers + servers} hosts.
     * @param workers    W, one host each.
     * @param elements   the whole tensor, float32.
     * @param iterations timed all-reduces.
     * @param warmup     untimed all-reduces first.
     * @param workDir    logs.
     * @param timeoutS   one run's limit.
     * @param jvmOptions extra options of every child JVM.
     * @param resultsDown whether the switches relay the servers' results to their workers (one result per switch
     *                    on a server's link) or the servers answer every worker.
     */
    public record Settings(Placement placement, int workers, int elements, int iterations, int warmup, Path workDir,
                           long timeoutS, List<String> jvmOptions, boolean resultsDown)
    {
        public Settings
        {
            if (workers < 1 || workers > 16 || elements < 2 || iterations < 1 || warmup < 0)
            {
                throw new IllegalArgumentException("workers 1..16, at least 2 elements, positive iterations");
            }
            jvmOptions = List.copyOf(jvmOptions);
        }
    }

    /**
     * One run.
     *
     * @param servers  K.
     * @param split    each server's share of the elements.
     * @param round    which round.
     * @param seconds  the slowest worker's timed all-reduces (NaN when it failed).
     * @param p50Ms    the slowest worker's median all-reduce, ms.
     * @param failure  why it failed, or null.
     */
    public record Result(int servers, int[] split, int round, double seconds, double p50Ms, String failure)
    {
        public boolean ok()
        {
            return failure == null;
        }
    }

    private final Settings settings;

    public ParameterServerSplitBench(final Settings settings)
    {
        this.settings = settings;
    }

    /** The elements of each of {@code servers} shares: as even as the tensor allows (InArt's split for equal links). */
    public static int[] evenSplit(final int elements, final int servers)
    {
        final int[] split = new int[servers];
        for (int k = 0; k < servers; k++)
        {
            split[k] = elements / servers + (k < elements % servers ? 1 : 0);
        }
        return split;
    }

    /** Runs each server count {@code rounds} times, alternating. */
    public List<Result> run(final List<Integer> serverCounts, final int rounds) throws InterruptedException
    {
        final List<Result> results = new ArrayList<>();
        for (int round = 1; round <= rounds; round++)
        {
            for (int i = 0; i < serverCounts.size(); i++)
            {
                final int servers = serverCounts.get((i + round - 1) % serverCounts.size());
                results.add(runOnce(evenSplit(settings.elements(), servers), round));
            }
        }
        return results;
    }

    /** One run with {@code split.length} servers. */
    public Result runOnce(final int[] split, final int round) throws InterruptedException
    {
        final Placement placement = settings.placement();
        final int w = settings.workers();
        final int k = split.length;
        final String tag = "ps" + k + "-r" + round;
        try (ChildProcesses children = new ChildProcesses())
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.timeoutS());
            final List<Path> switchLogs = new ArrayList<>();
            for (int s = 0; s < k; s++)
            {
                final int job = s + 1;
                final String jobSpec = job + ":" + w;
                final String psAt = placement.rankAddress(w + s) + ":" + (9100 + 100 * s);
                final StringJoiner workersAt = new StringJoiner(",");
                final StringJoiner sources = new StringJoiner(",");
                final StringJoiner local = new StringJoiner(",");
                for (int r = 0; r < w; r++)
                {
                    workersAt.add(placement.rankAddress(r) + ":" + (9101 + s));
                    sources.add(job + ":" + r + "=" + placement.rankAddress(r) + ":" + (9101 + s));
                    local.add(Integer.toString(r));
                }
                children.start(Placement.prefixed(placement.rankExec(w + s), InaggJvm.command(settings.jvmOptions(),
                    List.of("ps", "--bind", psAt, "--job", jobSpec, "--workers-at", workersAt.toString(),
                        "--stats-interval", "0", "--duration", Long.toString(settings.timeoutS())))), Map.of(),
                    settings.workDir().resolve("split-" + tag + "-ps" + job + ".log"));
                final Path switchLog = settings.workDir().resolve("split-" + tag + "-switch" + job + ".log");
                switchLogs.add(switchLog);
                children.start(Placement.prefixed(placement.switchExec(), InaggJvm.command(settings.jvmOptions(),
                    List.of("switch", "--bind", placement.switchAddress() + ":" + (9000 + s), "--job", jobSpec,
                        "--source", sources.toString(), "--upstream", psAt, "--local-workers", local.toString(),
                        settings.resultsDown() ? "--results-down" : "--no-results-down",
                        "--stats-interval", "0", "--duration", Long.toString(settings.timeoutS())))), Map.of(),
                    switchLog);
            }
            for (final Path log : switchLogs)
            {
                if (!ChildProcesses.awaitText(log, "listening", deadline))
                {
                    return new Result(k, split, round, Double.NaN, Double.NaN, "a switch did not start: "
                        + ChildProcesses.lastLine(ChildProcesses.read(log)));
                }
            }
            final List<Process> processes = new ArrayList<>();
            final List<Path> logs = new ArrayList<>();
            for (int s = 0; s < k; s++)
            {
                for (int r = 0; r < w; r++)
                {
                    final Path log = settings.workDir().resolve("split-" + tag + "-job" + (s + 1) + "-w" + r + ".log");
                    logs.add(log);
                    processes.add(children.start(Placement.prefixed(placement.rankExec(r), InaggJvm.command(
                        settings.jvmOptions(), List.of("worker", "--switch", placement.switchAddress() + ":"
                            + (9000 + s), "--bind", placement.rankAddress(r) + ":" + (9101 + s), "--job-id",
                            Integer.toString(s + 1), "--worker-id", Integer.toString(r), "--workers",
                            Integer.toString(w), "-n", Integer.toString(split[s]), "-i",
                            Integer.toString(settings.iterations()), "--warmup", Integer.toString(settings.warmup()),
                            "--no-progress"))), Map.of(), log));
                }
            }
            final boolean ok = ChildProcesses.awaitAll(processes, deadline);
            final double seconds = EsaSharingBench.slowest(logs);
            if (!ok || Double.isNaN(seconds))
            {
                final StringJoiner why = new StringJoiner("; ");
                for (final Path log : logs)
                {
                    final String text = ChildProcesses.read(log);
                    if (!text.contains("within bound           yes"))
                    {
                        why.add(log.getFileName() + ": " + ChildProcesses.lastLine(text));
                    }
                }
                return new Result(k, split, round, seconds, Double.NaN, "failed (" + why + ")");
            }
            return new Result(k, split, round, seconds, EsaSharingBench.slowestP50(logs), null);
        }
    }

    /** Per server count: the median time over rounds, every run, and the speed-up over the fewest servers. */
    public static String table(final List<Result> results, final double boundOneServerSeconds,
        final double hostBoundSeconds)
    {
        final StringBuilder out = new StringBuilder();
        out.append("| parameter servers | split (elements) | bound, s | median s (runs) | p50 all-reduce, ms "
            + "| speed-up |\n");
        out.append("|---:|---|---:|---:|---:|---:|\n");
        final List<Integer> counts = results.stream().map(Result::servers).distinct().sorted().toList();
        double first = Double.NaN;
        for (final int count : counts)
        {
            final List<Result> runs = results.stream().filter(r -> r.servers() == count).toList();
            final double median = EsaSharingBench.median(runs.stream().filter(Result::ok)
                .mapToDouble(Result::seconds).toArray());
            final double p50 = EsaSharingBench.median(runs.stream().filter(Result::ok)
                .mapToDouble(Result::p50Ms).toArray());
            if (Double.isNaN(first))
            {
                first = median;
            }
            final StringJoiner each = new StringJoiner(", ");
            runs.forEach(r -> each.add(r.ok() ? String.format(Locale.ROOT, "%.2f", r.seconds()) : "failed"));
            out.append(String.format(Locale.ROOT, "| %d | %s | %.2f | %.2f (%s) | %.0f | %.2fx |%n", count,
                java.util.Arrays.toString(runs.getFirst().split()),
                Math.max(hostBoundSeconds, boundOneServerSeconds / count),
                median, each, p50,
                first / median));
        }
        for (final Result result : results)
        {
            if (!result.ok())
            {
                out.append(result.servers()).append(" servers, round ").append(result.round()).append(": ")
                    .append(result.failure()).append('\n');
            }
        }
        return out.toString();
    }
}
