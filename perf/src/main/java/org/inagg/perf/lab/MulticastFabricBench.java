package org.inagg.perf.lab;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.inagg.control.topology.Topology;
import org.inagg.perf.peers.ChildProcesses;
import org.inagg.perf.peers.PeerResult;
import org.inagg.perf.peers.PeerRun;

/**
 * Path-aware multicast's fabric claim measured ({@link MulticastCases}): two jobs run at once on a fresh
 * {@link TopologyFabric} per run, each deployed by {@link PlanOnFabric} along its tree (job j's switches on port
 * 9000 + j - 1 of their leaves' aggregation units), once with the colliding random trees and once with the path-aware
 * ones. Per case and job: the slowest worker's p50 and mean all-reduce beside the bound of the busiest link direction
 * ({@link FabricStreams}), and per job the ratio random / path-aware beside the bounds' and the flow-level simulator's.
 * Cases run in rotating order over the rounds. The claim needs the jobs to share the links while they are timed: each
 * run says for how much of a job's timed all-reduces the other job still ran (a job starved in its warm-up can be timed
 * alone once the other is done), and the medians leave out runs where that is below {@link #CONCURRENT}.
 */
public final class MulticastFabricBench
{
    /**
     * What to run.
     *
     * @param topology      a spine-leaf topology file's.
     * @param jobs          the two jobs.
     * @param perGbps       the emulated rate of one Gb/s of the file.
     * @param slots         every worker's window.
     * @param elements      float32 per worker.
     * @param iterations    timed all-reduces.
     * @param warmup        untimed ones first.
     * @param rounds        runs of each case.
     * @param timeoutS      one run's limit.
     * @param workDir       logs.
     * @param jvmOptions    extra options of every child JVM.
     * @param workerOptions extra options of every {@code inagg worker}.
     */
    public record Settings(Topology topology, List<MulticastCases.Job> jobs, LinkRate perGbps, int slots, int elements,
                           int iterations, int warmup, int rounds, long timeoutS, Path workDir, List<String> jvmOptions,
                           List<String> workerOptions)
    {
        public Settings
        {
            if (slots < 1 || slots >= org.inagg.wire.InaggHeader.MAX_SLOTS || rounds < 1 || elements < 1
                || iterations < 1 || warmup < 0 || timeoutS < 1)
            {
                throw new IllegalArgumentException("needs slots in range, positive rounds, elements, iterations and "
                    + "timeout, warmup not negative");
            }
            jobs = List.copyOf(jobs);
            jvmOptions = List.copyOf(jvmOptions);
            workerOptions = List.copyOf(workerOptions);
        }

        long bytes()
        {
            return 4L * elements;
        }
    }

    private MulticastFabricBench()
    {
    }

    /**
     * Both cases' trees and plans, checked: what {@link #run} runs.
     *
     * @throws IllegalArgumentException naming a bad job or topology, before anything is made.
     */
    public static List<MulticastCases.Case> plan(final Settings settings)
    {
        final List<MulticastCases.Case> cases = MulticastCases.both(settings.topology(), settings.jobs());
        for (final MulticastCases.Case c : cases)
        {
            new FabricStreams(settings.topology(), settings.perGbps(), c.plans()); // every hop a link of the file
        }
        return cases;
    }

    /**
     * Runs each case {@code rounds} times, each on a fresh fabric made by {@code fabrics}, and prints the table.
     *
     * @return whether every run measured.
     */
    public static boolean run(final Settings settings, final Supplier<TopologyFabric> fabrics,
        final Supplier<String> loadAverage, final PrintWriter out) throws InterruptedException
    {
        final List<MulticastCases.Case> cases = plan(settings);
        for (final MulticastCases.Case c : cases)
        {
            final FabricStreams streams = new FabricStreams(settings.topology(), settings.perGbps(), c.plans());
            final FabricStreams.Bound fabric = streams.ofFabric(settings.bytes());
            out.printf(Locale.ROOT, "%s: %s; busiest link direction %s (%d streams), bound %.1f ms%n", c.name(),
                c.description(), fabric.hop(), fabric.streams(), 1e3 * fabric.seconds());
        }
        out.flush();
        final String loadBefore = loadAverage.get();
        final Map<String, List<Run>> results = new LinkedHashMap<>();
        boolean allOk = true;
        for (int round = 0; round < settings.rounds(); round++)
        {
            for (int k = 0; k < cases.size(); k++)
            {
                final MulticastCases.Case c = cases.get((k + round) % cases.size());
                final Run run;
                try (TopologyFabric fabric = fabrics.get())
                {
                    run = runOnce(settings, fabric, c, c.name() + "-r" + (round + 1));
                }
                results.computeIfAbsent(c.name(), n -> new ArrayList<>()).add(run);
                for (int j = 0; j < run.jobs().size(); j++)
                {
                    final PeerResult result = run.jobs().get(j);
                    allOk &= result.isMeasured();
                    out.printf(Locale.ROOT, "round %d %s job %d: %s%n", round + 1, c.name(), j + 1,
                        result.isMeasured() ? String.format(Locale.ROOT, "mean %.1f ms, p50 %.1f ms; the other job "
                            + "ran during %.0f %% of its timed all-reduces; %s", msPerAllReduce(settings, result),
                            1e3 * result.p50Seconds(), 100 * run.overlap()[j], result.note()) : result.note());
                }
                out.flush();
            }
        }
        out.print(table(settings, cases, results));
        out.printf("load average before %s, after %s%n", loadBefore, loadAverage.get());
        out.flush();
        return allOk;
    }

    /**
     * One run of both jobs.
     *
     * @param jobs    job i's result at i.
     * @param overlap job i's share (0..1) of its timed all-reduces during which every other job still ran (NaN when
     *                not measured): below {@link #CONCURRENT} the job was partly timed alone.
     */
    record Run(List<PeerResult> jobs, double[] overlap)
    {
        boolean concurrent()
        {
            for (final double share : overlap)
            {
                if (!(share >= CONCURRENT))
                {
                    return false;
                }
            }
            return true;
        }
    }

    /** The least overlap of a run counted in the medians. */
    static final double CONCURRENT = 0.9;

    private static final Pattern TIMED = Pattern.compile("time\\s+([0-9.]+) s for");

    /** Both jobs of one case at once on {@code fabric}. */
    static Run runOnce(final Settings settings, final TopologyFabric fabric, final MulticastCases.Case c,
        final String name) throws InterruptedException
    {
        try (ChildProcesses children = new ChildProcesses())
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.timeoutS());
            final List<PlanOnFabric.Deployment> deployed = new ArrayList<>();
            for (int j = 0; j < c.plans().size(); j++)
            {
                final PeerRun run = new PeerRun(settings.jobs().get(j).workers().size(), settings.elements(),
                    settings.iterations(), settings.warmup(), settings.timeoutS(), settings.workDir());
                deployed.add(PlanOnFabric.Deployment.startServers(fabric, c.plans().get(j), j + 1, name + "-job"
                    + (j + 1), run, settings.slots(), settings.jvmOptions(), children));
            }
            final StringJoiner failures = new StringJoiner("; ");
            for (final PlanOnFabric.Deployment job : deployed)
            {
                final String failure = job.awaitServers(deadline);
                if (failure != null)
                {
                    failures.add(failure);
                }
            }
            final List<PeerResult> results = new ArrayList<>();
            final double[] overlap = new double[deployed.size()];
            Arrays.fill(overlap, Double.NaN);
            if (failures.length() > 0)
            {
                for (int j = 0; j < deployed.size(); j++)
                {
                    results.add(PeerResult.failed(name + "-job" + (j + 1), settings.jobs().get(j).workers().size(),
                        failures.toString()));
                }
                return new Run(results, overlap);
            }
            final long started = System.currentTimeMillis();
            final List<Process> workers = new ArrayList<>();
            for (final PlanOnFabric.Deployment job : deployed)
            {
                job.startWorkers(settings.workerOptions());
                workers.addAll(job.workers());
            }
            final boolean ok = ChildProcesses.awaitAll(workers, deadline);
            final double[][] windows = new double[deployed.size()][];
            for (int j = 0; j < deployed.size(); j++)
            {
                // one job's failed worker ends the wait for all; the other job is judged by its own workers
                final boolean jobOk = ok || ChildProcesses.awaitAll(deployed.get(j).workers(), deadline);
                results.add(deployed.get(j).collect(jobOk));
                windows[j] = timedWindow(deployed.get(j).logs());
            }
            for (int j = 0; j < deployed.size(); j++)
            {
                overlap[j] = overlap(windows, j, started);
            }
            return new Run(results, overlap);
        }
    }

    /**
     * A job's timed all-reduces in wall-clock milliseconds, {start, end}: from its workers' logs (each written last
     * when the worker prints its timing, {@code time T s for ...} the timed part before that); NaNs when a log lacks
     * it.
     */
    static double[] timedWindow(final List<Path> logs)
    {
        double start = Double.POSITIVE_INFINITY;
        double end = Double.NEGATIVE_INFINITY;
        for (final Path log : logs)
        {
            final Matcher matcher = TIMED.matcher(ChildProcesses.read(log));
            double seconds = Double.NaN;
            while (matcher.find())
            {
                seconds = Double.parseDouble(matcher.group(1));
            }
            final double written;
            try
            {
                written = Files.getLastModifiedTime(log).toMillis();
            }
            catch (final IOException ex)
            {
                return new double[] {Double.NaN, Double.NaN};
            }
            if (Double.isNaN(seconds))
            {
                return new double[] {Double.NaN, Double.NaN};
            }
            start = Math.min(start, written - 1e3 * seconds);
            end = Math.max(end, written);
        }
        return new double[] {start, end};
    }

    /**
     * Job {@code j}'s share of its timed window during which every other job ran (from {@code started}, when the
     * workers were started, to the end of its own timed window).
     */
    static double overlap(final double[][] windows, final int j, final long started)
    {
        double until = Double.POSITIVE_INFINITY;
        for (int other = 0; other < windows.length; other++)
        {
            if (other != j)
            {
                until = Math.min(until, windows[other][1]);
            }
        }
        final double from = Math.max(windows[j][0], started);
        final double length = windows[j][1] - windows[j][0];
        if (!(length > 0) || Double.isNaN(until))
        {
            return Double.NaN;
        }
        return Math.max(0, Math.min(1, (Math.min(until, windows[j][1]) - from) / length));
    }

    private static double msPerAllReduce(final Settings settings, final PeerResult result)
    {
        return 1e3 * settings.elements() / result.elementsPerSecond();
    }

    /**
     * The table: per case and job, then per job the ratios. The medians are over the concurrent runs (every job
     * timed while the others ran, {@link Run#concurrent}), or over all where none was; a run left out is starred.
     */
    static String table(final Settings settings, final List<MulticastCases.Case> cases,
        final Map<String, List<Run>> results)
    {
        final StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%n| case | job | spine | busiest link direction of its trees (streams) "
            + "| bound ms | p50 ms (runs) | per all-reduce ms, slowest worker (runs) | of bound |%n"
            + "|---|---|---|---|---:|---:|---:|---:|%n"));
        final int jobs = settings.jobs().size();
        final double[][] mean = new double[cases.size()][jobs];
        final double[][] p50 = new double[cases.size()][jobs];
        final double[][] bound = new double[cases.size()][jobs];
        boolean starred = false;
        for (int k = 0; k < cases.size(); k++)
        {
            final MulticastCases.Case c = cases.get(k);
            final FabricStreams streams = new FabricStreams(settings.topology(), settings.perGbps(), c.plans());
            final List<Run> runs = results.getOrDefault(c.name(), List.of());
            final boolean anyConcurrent = runs.stream().anyMatch(Run::concurrent);
            for (int j = 0; j < jobs; j++)
            {
                final StringJoiner p50s = new StringJoiner(", ");
                final StringJoiner means = new StringJoiner(", ");
                final List<Double> countedMeans = new ArrayList<>();
                final List<Double> countedP50s = new ArrayList<>();
                for (final Run run : runs)
                {
                    final PeerResult r = run.jobs().get(j);
                    if (!r.isMeasured())
                    {
                        continue;
                    }
                    final boolean counted = run.concurrent() || !anyConcurrent;
                    starred |= !counted;
                    final String mark = counted ? "" : "*";
                    p50s.add(String.format(Locale.ROOT, "%.1f%s", 1e3 * r.p50Seconds(), mark));
                    means.add(String.format(Locale.ROOT, "%.1f%s", msPerAllReduce(settings, r), mark));
                    if (counted)
                    {
                        countedP50s.add(1e3 * r.p50Seconds());
                        countedMeans.add(msPerAllReduce(settings, r));
                    }
                }
                final FabricStreams.Bound b = streams.ofJob(j, settings.bytes());
                mean[k][j] = PlanFabricBench.median(countedMeans.stream().mapToDouble(Double::doubleValue).toArray());
                p50[k][j] = PlanFabricBench.median(countedP50s.stream().mapToDouble(Double::doubleValue).toArray());
                bound[k][j] = 1e3 * b.seconds();
                out.append(String.format(Locale.ROOT, "| %s | %d (%s) | %s | %s (%d) | %.1f | %.1f (%s) | %.1f (%s) "
                    + "| %.2f |%n", c.name(), j + 1, settings.jobs().get(j).ps(), String.join(", ", c.spines().get(j)),
                    b.hop(), b.streams(), bound[k][j], p50[k][j], p50s, mean[k][j], means, bound[k][j] / mean[k][j]));
            }
        }
        if (starred)
        {
            out.append(String.format(Locale.ROOT, "* a run in which some job ran less than %.0f %% of its timed "
                + "all-reduces beside the other: not in the median%n", 100 * CONCURRENT));
        }
        final double gigabits = 8e-9 * settings.bytes();
        final double simulated = MulticastCases.simulatedSeconds(settings.topology(), cases.get(0), gigabits)
            / MulticastCases.simulatedSeconds(settings.topology(), cases.get(1), gigabits);
        out.append(String.format(Locale.ROOT, "%n| job | %s / %s, per all-reduce | p50 | bounds | simulator, these "
            + "trees (8x8 spine-leaf: 2.0) |%n|---|---:|---:|---:|---:|%n", cases.get(0).name(), cases.get(1).name()));
        for (int j = 0; j < jobs; j++)
        {
            out.append(String.format(Locale.ROOT, "| %d (%s) | %.2fx | %.2fx | %.2fx | %.2fx |%n", j + 1,
                settings.jobs().get(j).ps(), mean[0][j] / mean[1][j], p50[0][j] / p50[1][j],
                bound[0][j] / bound[1][j], simulated));
        }
        for (final List<Run> runs : results.values())
        {
            for (final Run run : runs)
            {
                for (final PeerResult r : run.jobs())
                {
                    if (!r.isMeasured())
                    {
                        out.append(r.peer()).append(": ").append(r.note()).append('\n');
                    }
                }
            }
        }
        return out.toString();
    }

}
