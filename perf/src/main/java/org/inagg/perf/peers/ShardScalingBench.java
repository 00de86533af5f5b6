package org.inagg.perf.peers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * How the software switch scales with its shards ({@code inagg switch --shards}): J jobs of W {@code inagg worker}
 * processes each, all at once on one switch on loopback, job ids 1..J (so the kernel spreads them over the shards as
 * job id % shards does). Per run: each job's time per all-reduce (its slowest worker's p50, JVM start and JOIN left
 * out), their throughput together (the sum over jobs of elements per p50) and the switch process's CPU time from when
 * it listens to the workers' end (its JVM's start left out; its JIT, the warm-up and the JOINs in). Every worker's
 * result is checked against the exact sum.
 */
public final class ShardScalingBench
{
    /** One run: {@code jobs} jobs on a switch of {@code shards} shards. */
    public record Row(int jobs, int workersPerJob, int shards, List<PeerResult> perJob, double elementsPerSecond,
        double switchCpuSeconds)
    {
        public boolean isMeasured()
        {
            return perJob.stream().allMatch(PeerResult::isMeasured);
        }

        /** Why a run is not measured: its first failed job's note. */
        public String failure()
        {
            return perJob.stream().filter(result -> !result.isMeasured()).map(PeerResult::note).findFirst()
                .orElse("");
        }
    }

    private final List<String> jvmOptions;
    private final List<String> workerOptions;

    /**
     * @param jvmOptions    extra JVM options of every process.
     * @param workerOptions extra {@code inagg worker} options.
     */
    public ShardScalingBench(final List<String> jvmOptions, final List<String> workerOptions)
    {
        this.jvmOptions = List.copyOf(jvmOptions);
        this.workerOptions = List.copyOf(workerOptions);
    }

    /**
     * Runs {@code jobs} jobs of {@code workersPerJob} workers on a switch of {@code shards} shards (the switch's
     * default packets and slots).
     *
     * @throws IllegalArgumentException when a count is below 1 or the shards are more than the switch takes.
     */
    public Row run(final int jobs, final int workersPerJob, final int shards, final int elements, final int iterations,
        final int warmup, final long timeoutS, final Path dir) throws InterruptedException
    {
        if (jobs < 1 || jobs > 64 || workersPerJob < 1 || shards < 1 || shards > 64)
        {
            throw new IllegalArgumentException("jobs and shards must be in 1..64 and workers at least 1, got " + jobs
                + " jobs of " + workersPerJob + " workers on " + shards + " shards");
        }
        final PeerRun run = new PeerRun(workersPerJob, elements, iterations, warmup, timeoutS, dir);
        final String tag = "j" + jobs + "-s" + shards;
        final String w = Integer.toString(workersPerJob);
        final String switchAt = "127.0.0.1:" + ChildProcesses.freePort(true);
        try (ChildProcesses children = new ChildProcesses())
        {
            final List<String> switchArgs = new ArrayList<>(List.of("switch", "--bind", switchAt, "--open",
                "--shards", Integer.toString(shards), "--stats-interval", "0", "--duration", Long.toString(timeoutS)));
            for (int job = 1; job <= jobs; job++)
            {
                switchArgs.addAll(List.of("--job", job + ":" + w));
            }
            final Path switchLog = dir.resolve("switch-" + tag + ".log");
            final Process switchProcess = children.start(InaggJvm.command(jvmOptions, switchArgs), Map.of(), switchLog);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
            if (!ChildProcesses.awaitText(switchLog, "inagg switch listening", deadline))
            {
                final PeerResult failed = PeerResult.failed("switch", workersPerJob, "the switch did not start: "
                    + ChildProcesses.lastLine(ChildProcesses.read(switchLog)) + " (" + switchLog + ")");
                return new Row(jobs, workersPerJob, shards, List.of(failed), 0, 0);
            }
            final double startCpu = cpuSeconds(switchProcess);
            final List<Process> workers = new ArrayList<>();
            final List<List<Path>> logs = new ArrayList<>();
            for (int job = 1; job <= jobs; job++)
            {
                final List<Path> jobLogs = new ArrayList<>();
                for (int id = 0; id < workersPerJob; id++)
                {
                    final List<String> args = new ArrayList<>(List.of("worker", "--switch", switchAt,
                        "--bind", "127.0.0.1:0", "--job-id", Integer.toString(job), "--workers", w,
                        "--worker-id", Integer.toString(id), "-n", Integer.toString(elements),
                        "-i", Integer.toString(iterations), "--warmup", Integer.toString(warmup), "--no-progress"));
                    args.addAll(workerOptions);
                    final Path log = dir.resolve("worker-" + tag + "-job" + job + "-" + id + ".log");
                    jobLogs.add(log);
                    workers.add(children.start(InaggJvm.command(jvmOptions, args), Map.of(), log));
                }
                logs.add(jobLogs);
            }
            final boolean ok = ChildProcesses.awaitAll(workers, deadline);
            final double switchCpu = cpuSeconds(switchProcess) - startCpu;
            final List<PeerResult> perJob = new ArrayList<>();
            double total = 0;
            for (int job = 1; job <= jobs; job++)
            {
                final PeerResult result = WorkerLogs.collect("job " + job, run, logs.get(job - 1), ok,
                    "job " + job + " on shard " + org.inagg.transport.ReusePortSteering.shardOf(job, shards));
                perJob.add(result);
                total += result.isMeasured() ? elements / result.p50Seconds() : 0;
            }
            return new Row(jobs, workersPerJob, shards, perJob, total, switchCpu);
        }
    }

    private static double cpuSeconds(final Process process)
    {
        return process.toHandle().info().totalCpuDuration().map(Duration::toNanos).orElse(0L) / 1e9;
    }
}
