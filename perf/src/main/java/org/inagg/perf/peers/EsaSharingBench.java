package org.inagg.perf.peers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * ESA's seed on real processes: two jobs of {@code inagg worker}s sharing one switch's aggregators, a long
 * low-priority job running when a short high-priority one arrives (docs/esa.md, docs/reproductions.md). Each
 * {@link Scheme} is one way of sharing the switch's memory; every run starts the switch (and the jobs' parameter
 * servers), the low-priority job's workers, and, once they have joined, the high-priority job's; each job's time is
 * its slowest worker's own timing of its all-reduces (JVM start and JOIN left out), and every result is checked.
 * <p>
 * Placement: high-priority worker w on rank w, low-priority worker w on rank P + w, both parameter servers on rank 2P
 * (one link, as ATP's PS behind its NIC), the switch where the placement puts switches. On an emulated cluster every
 * process binds its host's address; on loopback, free ports.
 */
public final class EsaSharingBench
{
    /** The high-priority job's id, and the low-priority one's. */
    public static final int HIGH_JOB = 1;
    public static final int LOW_JOB = 2;
    public static final int HIGH_PRIORITY = 200;
    public static final int LOW_PRIORITY = 10;

    private static final Pattern TIME = Pattern.compile("(?m)^\\s*time\\s+([0-9.]+) s for");
    private static final Pattern P50 = Pattern.compile("(?m)^\\s*per all-reduce\\s+min [0-9.]+ ms, p50 ([0-9.]+) ms");
    private static final Pattern SWITCH_SUMMARY = Pattern.compile("(?m)^(esa-switch|switch): (received.*)$");

    /** How the switch's memory is shared. */
    public enum Scheme
    {
        /** ESA: one pool, the high-priority job's packets preempt the low one's partial sums. */
        ESA("esa", "ESA: shared pool, priorities 200 / 10, preemption"),
        /** ESA's pool without priorities: both jobs equal, first come first served, collisions to the server. */
        ESA_EQUAL("esa-equal", "shared pool, equal priorities (FIFO, no preemption)"),
        /** ATP: one pool, an aggregator held until the server's result returns, collisions to the server. */
        ATP("atp", "ATP: shared pool, freed on the server's acknowledgement"),
        /** SwitchML: the pool split in two fixed halves (the slot switch, a job's window = its half). */
        STATIC("static", "static partition: half the pool each (SwitchML)"),
        /** The high-priority job alone on the ESA switch: the time the others are compared with. */
        ALONE("alone", "high-priority job alone on the ESA switch");

        private final String option;
        private final String description;

        Scheme(final String option, final String description)
        {
            this.option = option;
            this.description = description;
        }

        public String option()
        {
            return option;
        }

        public String description()
        {
            return description;
        }

        /** The scheme named {@code text} on the command line. */
        public static Scheme parse(final String text)
        {
            for (final Scheme scheme : values())
            {
                if (scheme.option.equals(text))
                {
                    return scheme;
                }
            }
            throw new IllegalArgumentException("unknown scheme '" + text + "': give esa, esa-equal, atp, static or "
                + "alone");
        }
    }

    /**
     * What to run.
     *
     * @param placement      where ranks and the switch live (loopback or an emulated cluster of 2P + 1 hosts).
     * @param workersPerJob  P, each job's workers.
     * @param highElements   the high-priority job's tensor.
     * @param highIterations its all-reduces.
     * @param lowElements    the low-priority job's tensor.
     * @param lowIterations  its all-reduces.
     * @param aggregators    the switch's pool (static: split in two).
     * @param window         each worker's window on the shared pool (blocks in flight).
     * @param warmup         untimed all-reduces each worker runs first (JIT, first touch), during the other job's.
     * @param workDir        logs.
     * @param timeoutS       one run's limit.
     * @param jvmOptions     extra options of every child JVM.
     */
    public record Settings(Placement placement, int workersPerJob, int highElements, int highIterations,
                           int lowElements, int lowIterations, int aggregators, int window, int warmup, Path workDir,
                           long timeoutS, List<String> jvmOptions)
    {
        public Settings
        {
            if (workersPerJob < 1 || workersPerJob > 16)
            {
                throw new IllegalArgumentException("workers per job must be 1..16, not " + workersPerJob);
            }
            if (aggregators < 2 || window < 1 || highElements < 1 || lowElements < 1 || highIterations < 1
                || lowIterations < 1 || warmup < 0)
            {
                throw new IllegalArgumentException("aggregators (at least 2), window, elements and iterations must be "
                    + "positive");
            }
            jvmOptions = List.copyOf(jvmOptions);
        }

        /** Hosts an emulated cluster needs: both jobs' workers and the parameter servers' host. */
        public int hosts()
        {
            return 2 * workersPerJob + 1;
        }
    }

    /**
     * One run of one scheme.
     *
     * @param scheme      the scheme.
     * @param round       which round (schemes alternate within a round).
     * @param highSeconds the high-priority job's time (slowest worker), NaN when it failed.
     * @param lowSeconds  the low-priority job's (NaN for {@link Scheme#ALONE} and failures).
     * @param highP50Ms   the high-priority job's median all-reduce (its slowest worker's), ms.
     * @param lowP50Ms    the low-priority job's.
     * @param switchLine  the switch's closing counters.
     * @param failure     why the run failed, or null.
     */
    public record Result(Scheme scheme, int round, double highSeconds, double lowSeconds, double highP50Ms,
                         double lowP50Ms, String switchLine,
                         String failure)
    {
        public boolean ok()
        {
            return failure == null;
        }
    }

    private final Settings settings;

    public EsaSharingBench(final Settings settings)
    {
        this.settings = settings;
    }

    /** Runs every scheme {@code rounds} times, the order rotating each round (so drift in load hits each alike). */
    public List<Result> run(final List<Scheme> schemes, final int rounds) throws InterruptedException
    {
        final List<Result> results = new ArrayList<>();
        for (int round = 1; round <= rounds; round++)
        {
            for (int i = 0; i < schemes.size(); i++)
            {
                results.add(runOnce(schemes.get((i + round - 1) % schemes.size()), round));
            }
        }
        return results;
    }

    /** One scheme, once. */
    public Result runOnce(final Scheme scheme, final int round) throws InterruptedException
    {
        final Placement placement = settings.placement();
        final int p = settings.workersPerJob();
        final Endpoints at = Endpoints.of(placement, p);
        final String tag = scheme.option() + "-r" + round;
        final boolean withLow = scheme != Scheme.ALONE;
        final int halfPool = settings.aggregators() / 2;
        final int window = scheme == Scheme.STATIC ? halfPool : settings.window();
        final String highJob = HIGH_JOB + ":" + p + ":" + window + ":256";
        final String lowJob = LOW_JOB + ":" + p + ":" + window + ":256";
        try (ChildProcesses children = new ChildProcesses())
        {
            final Path switchLog = settings.workDir().resolve("esa-" + tag + "-switch.log");
            final List<String> switchArgs = new ArrayList<>();
            if (scheme == Scheme.STATIC)
            {
                switchArgs.addAll(List.of("switch", "--bind", at.switchAt(), "--job", highJob));
                if (withLow)
                {
                    switchArgs.addAll(List.of("--job", lowJob));
                }
            }
            else
            {
                final String atp = scheme == Scheme.ATP ? "atp" : "esa";
                final int lowPriority = scheme == Scheme.ESA_EQUAL ? HIGH_PRIORITY : LOW_PRIORITY;
                switchArgs.addAll(List.of("esa-switch", "--bind", at.switchAt(), "--aggregators",
                    Integer.toString(settings.aggregators()), "--mode", atp, "--job", highJob + ":" + HIGH_PRIORITY));
                switchArgs.addAll(List.of("--server", HIGH_JOB + "=" + at.serverAt(HIGH_JOB)));
                if (withLow)
                {
                    switchArgs.addAll(List.of("--job", lowJob + ":" + lowPriority, "--server",
                        LOW_JOB + "=" + at.serverAt(LOW_JOB)));
                }
                for (final int job : withLow ? List.of(HIGH_JOB, LOW_JOB) : List.of(HIGH_JOB))
                {
                    final StringJoiner workersAt = new StringJoiner(",");
                    for (int w = 0; w < p; w++)
                    {
                        workersAt.add(at.workerAt(job, w));
                    }
                    final List<String> ps = new ArrayList<>(List.of("ps", "--bind", at.serverAt(job), "--job",
                        (job == HIGH_JOB ? highJob : lowJob), "--workers-at", workersAt.toString(), "--stats-interval",
                        "1", "--duration", Long.toString(settings.timeoutS())));
                    if (scheme == Scheme.ATP)
                    {
                        ps.addAll(List.of("--results-via", at.switchAt()));
                    }
                    children.start(Placement.prefixed(placement.rankExec(2 * p), InaggJvm.command(
                        settings.jvmOptions(), ps)), Map.of(), settings.workDir().resolve("esa-" + tag + "-ps" + job
                        + ".log"));
                }
            }
            final StringJoiner sources = new StringJoiner(",");
            for (final int job : withLow ? List.of(HIGH_JOB, LOW_JOB) : List.of(HIGH_JOB))
            {
                for (int w = 0; w < p; w++)
                {
                    sources.add(job + ":" + w + "=" + at.workerAt(job, w));
                }
            }
            // counters every second: the last report stands for the run (a SIGTERM'd JVM may not print its closing one)
            switchArgs.addAll(List.of("--source", sources.toString(), "--stats-interval", "1", "--duration",
                Long.toString(settings.timeoutS())));
            final Process switchProcess = children.start(Placement.prefixed(placement.switchExec(),
                InaggJvm.command(settings.jvmOptions(), switchArgs)), Map.of(), switchLog);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.timeoutS());
            if (!ChildProcesses.awaitText(switchLog, "listening", deadline) || !switchProcess.isAlive())
            {
                return failed(scheme, round, "the switch did not start: " + ChildProcesses.lastLine(
                    ChildProcesses.read(switchLog)));
            }
            final List<Process> workers = new ArrayList<>();
            final List<Path> lowLogs = new ArrayList<>();
            if (withLow)
            {
                for (int w = 0; w < p; w++)
                {
                    final Path log = settings.workDir().resolve("esa-" + tag + "-low-w" + w + ".log");
                    lowLogs.add(log);
                    workers.add(startWorker(children, at, LOW_JOB, w, settings.lowElements(),
                        settings.lowIterations(), log));
                }
                for (final Path log : lowLogs)
                {
                    // the long job runs first: the short one arrives into a switch whose memory is taken
                    if (!ChildProcesses.awaitText(log, "joined switch", deadline))
                    {
                        return failed(scheme, round, "the low-priority job did not join: " + ChildProcesses.lastLine(
                            ChildProcesses.read(log)));
                    }
                }
            }
            final List<Path> highLogs = new ArrayList<>();
            for (int w = 0; w < p; w++)
            {
                final Path log = settings.workDir().resolve("esa-" + tag + "-high-w" + w + ".log");
                highLogs.add(log);
                workers.add(startWorker(children, at, HIGH_JOB, w, settings.highElements(), settings.highIterations(),
                    log));
            }
            final boolean ok = ChildProcesses.awaitAll(workers, deadline);
            switchProcess.destroy(); // SIGTERM: it prints its closing counters
            switchProcess.waitFor(ChildProcesses.TERM_GRACE_MS, TimeUnit.MILLISECONDS);
            final Matcher summary = SWITCH_SUMMARY.matcher(ChildProcesses.read(switchLog));
            String switchLine = "";
            while (summary.find())
            {
                switchLine = summary.group(2);
            }
            final double high = slowest(highLogs);
            final double low = withLow ? slowest(lowLogs) : Double.NaN;
            if (!ok || Double.isNaN(high) || (withLow && Double.isNaN(low)))
            {
                final StringJoiner why = new StringJoiner("; ");
                for (final Path log : concat(highLogs, lowLogs))
                {
                    final String text = ChildProcesses.read(log);
                    if (!text.contains("within bound           yes"))
                    {
                        why.add(log.getFileName() + ": " + ChildProcesses.lastLine(text));
                    }
                }
                return new Result(scheme, round, high, low, Double.NaN, Double.NaN, switchLine, "failed (" + why
                    + ")");
            }
            return new Result(scheme, round, high, low, slowestP50(highLogs), withLow ? slowestP50(lowLogs)
                : Double.NaN, switchLine, null);
        }
    }

    private Process startWorker(final ChildProcesses children, final Endpoints at, final int job, final int worker,
        final int elements, final int iterations, final Path log)
    {
        return children.start(Placement.prefixed(settings.placement().rankExec(at.rankOf(job, worker)),
            InaggJvm.command(settings.jvmOptions(), List.of("worker", "--switch", at.switchAt(), "--bind",
                at.workerAt(job, worker), "--job-id", Integer.toString(job), "--worker-id", Integer.toString(worker),
                "--workers", Integer.toString(settings.workersPerJob()), "-n", Integer.toString(elements), "-i",
                Integer.toString(iterations), "--warmup", Integer.toString(settings.warmup()), "--seed",
                Integer.toString(job), "--no-progress"))), Map.of(), log);
    }

    private static List<Path> concat(final List<Path> a, final List<Path> b)
    {
        final List<Path> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** The slowest worker's timed all-reduces, NaN when one did not report or its result was outside the bound. */
    static double slowest(final List<Path> logs)
    {
        double slowest = 0;
        for (final Path log : logs)
        {
            final String text = ChildProcesses.read(log);
            final Matcher time = TIME.matcher(text);
            if (!time.find() || !text.contains("within bound           yes"))
            {
                return Double.NaN;
            }
            slowest = Math.max(slowest, Double.parseDouble(time.group(1)));
        }
        return slowest;
    }

    /** The largest of the workers' median all-reduce times, ms (NaN when one did not report). */
    static double slowestP50(final List<Path> logs)
    {
        double slowest = 0;
        for (final Path log : logs)
        {
            final Matcher p50 = P50.matcher(ChildProcesses.read(log));
            if (!p50.find())
            {
                return Double.NaN;
            }
            slowest = Math.max(slowest, Double.parseDouble(p50.group(1)));
        }
        return slowest;
    }

    private static Result failed(final Scheme scheme, final int round, final String why)
    {
        return new Result(scheme, round, Double.NaN, Double.NaN, Double.NaN, Double.NaN, "", why);
    }

    /**
     * The table: per scheme the median over rounds of each job's time, the high-priority job's slowdown against
     * {@link Scheme#ALONE} (when run), and every run's figures, so the spread shows.
     */
    public static String table(final List<Result> results)
    {
        final StringBuilder out = new StringBuilder();
        final double alone = median(results.stream().filter(r -> r.scheme() == Scheme.ALONE && r.ok())
            .mapToDouble(Result::highSeconds).toArray());
        out.append("| scheme | high-priority job, median s (runs) | x alone | its p50 all-reduce, ms | "
            + "low-priority job, "
            + "median s (runs) | its p50 all-reduce, ms |\n");
        out.append("|---|---:|---:|---:|---:|---:|\n");
        for (final Scheme scheme : Scheme.values())
        {
            final List<Result> runs = results.stream().filter(r -> r.scheme() == scheme).toList();
            if (runs.isEmpty())
            {
                continue;
            }
            final double high = median(runs.stream().filter(Result::ok).mapToDouble(Result::highSeconds).toArray());
            final double low = median(runs.stream().filter(Result::ok).mapToDouble(Result::lowSeconds).toArray());
            final double highP50 = median(runs.stream().filter(Result::ok).mapToDouble(Result::highP50Ms).toArray());
            final double lowP50 = median(runs.stream().filter(Result::ok).mapToDouble(Result::lowP50Ms).toArray());
            out.append(String.format(Locale.ROOT, "| %s | %s (%s) | %s | %s | %s (%s) | %s |%n", scheme.description(),
                seconds(high), list(runs, true), Double.isNaN(alone) || Double.isNaN(high) ? "-"
                    : String.format(Locale.ROOT, "%.2fx", high / alone), millis(highP50),
                scheme == Scheme.ALONE ? "-" : seconds(low), scheme == Scheme.ALONE ? "-" : list(runs, false),
                scheme == Scheme.ALONE ? "-" : millis(lowP50)));
        }
        for (final Result result : results)
        {
            out.append(String.format(Locale.ROOT, "%s round %d: %s%s%n", result.scheme().option(), result.round(),
                result.switchLine().isEmpty() ? "(no switch counters)" : result.switchLine(),
                result.ok() ? "" : "; " + result.failure()));
        }
        return out.toString();
    }

    private static String list(final List<Result> runs, final boolean high)
    {
        final StringJoiner joiner = new StringJoiner(", ");
        for (final Result run : runs)
        {
            joiner.add(run.ok() ? seconds(high ? run.highSeconds() : run.lowSeconds()) : "failed");
        }
        return joiner.toString();
    }

    private static String millis(final double value)
    {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.0f", value);
    }

    private static String seconds(final double value)
    {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }

    static double median(final double[] values)
    {
        if (values.length == 0)
        {
            return Double.NaN;
        }
        final double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2]
            : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    /** Who binds what: the cluster's fixed ports on each host's own address, or free ports on loopback. */
    record Endpoints(Placement placement, int workersPerJob, int[] loopbackPorts)
    {
        static Endpoints of(final Placement placement, final int workersPerJob)
        {
            if (!placement.isLoopback())
            {
                return new Endpoints(placement, workersPerJob, null);
            }
            final int[] ports = new int[2 * workersPerJob + 3];
            final List<DatagramSocket> held = new ArrayList<>();
            try
            {
                for (int i = 0; i < ports.length; i++)
                {
                    final DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress());
                    held.add(socket);
                    ports[i] = socket.getLocalPort();
                }
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("picking free UDP ports", ex);
            }
            finally
            {
                held.forEach(DatagramSocket::close);
            }
            return new Endpoints(placement, workersPerJob, ports);
        }

        int rankOf(final int job, final int worker)
        {
            return (job == HIGH_JOB ? 0 : workersPerJob) + worker;
        }

        String workerAt(final int job, final int worker)
        {
            final int rank = rankOf(job, worker);
            return placement.rankAddress(rank) + ":" + (loopbackPorts == null ? 9101 : loopbackPorts[rank]);
        }

        String serverAt(final int job)
        {
            return placement.rankAddress(2 * workersPerJob) + ":" + (loopbackPorts == null ? job * 100 + 9000
                : loopbackPorts[2 * workersPerJob + job - 1]);
        }

        String switchAt()
        {
            return placement.switchAddress() + ":" + (loopbackPorts == null ? 9000
                : loopbackPorts[2 * workersPerJob + 2]);
        }
    }
}
