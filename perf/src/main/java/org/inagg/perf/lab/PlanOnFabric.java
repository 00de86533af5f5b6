package org.inagg.perf.lab;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

import org.inagg.control.deploy.PlanLoad;
import org.inagg.control.plan.InaPlan;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.perf.peers.ChildProcesses;
import org.inagg.perf.peers.InaggJvm;
import org.inagg.perf.peers.PeerResult;
import org.inagg.perf.peers.PeerRun;
import org.inagg.perf.peers.Placement;
import org.inagg.perf.peers.WorkerLogs;

/**
 * A plan of one parameter server (GRID's, or a baseline's rounded to one path per worker) deployed on a
 * {@link TopologyFabric} as processes: {@code inagg ps} on the PS's node, an {@code inagg switch --upstream} in the
 * aggregation unit of every switch the plan has sum workers (its local workers the plan's contributors), an
 * {@code inagg worker} on every worker's node sending to where the plan sums it; every flow pinned to the plan's path
 * (worker to its switch or PS, switch to PS), the PS's results to a switch (results down the tree: the switch
 * multicasts them to its workers) back along the switch's path reversed, and the PS's answers to each worker (direct
 * workers, retransmissions) back along the worker's path reversed. Worker r is the plan's r-th.
 */
public final class PlanOnFabric
{
    static final int PS_PORT = 9100;
    static final int SWITCH_PORT = 9000;
    static final int WORKER_PORT = 9101;

    private PlanOnFabric()
    {
    }

    /**
     * Deploys and runs {@code plan}; the fabric must be fresh (its pinned flows stay).
     *
     * @param slots every worker's window (the job's slots at the switches and the PS).
     * @return the slowest worker's timing, every result checked against the exact sum.
     * @throws IllegalArgumentException for a plan of several parameter servers or naming a node the fabric lacks.
     */
    public static PeerResult run(final TopologyFabric fabric, final InaPlan plan, final String name,
        final PeerRun run, final int slots, final List<String> jvmOptions, final List<String> workerOptions)
        throws InterruptedException
    {
        try (ChildProcesses children = new ChildProcesses())
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(run.timeoutS());
            final Deployment job = Deployment.startServers(fabric, plan, 1, name, run, slots, jvmOptions, children);
            final String failure = job.awaitServers(deadline);
            if (failure != null)
            {
                return PeerResult.failed(name, run.workers(), failure);
            }
            job.startWorkers(workerOptions);
            return job.collect(ChildProcesses.awaitAll(job.workers(), deadline));
        }
    }

    /**
     * One plan's processes on a fabric, started in two steps so that several jobs can share it: the parameter server
     * and the switches first, the workers once the server listens. Job {@code jobId}'s switches listen on port
     * {@code 9000 + jobId - 1} of their aggregation unit, its server on 9100 of its node, its workers on 9101 of
     * theirs; its flows are pinned to the plan's paths as {@link PlanOnFabric} says.
     */
    static final class Deployment
    {
        private final TopologyFabric fabric;
        private final InaPlan plan;
        private final int jobId;
        private final String name;
        private final PeerRun run;
        private final List<String> jvmOptions;
        private final ChildProcesses children;
        private final String ps;
        private final Path psLog;
        private final String jobSpec;
        private final List<Process> workers = new ArrayList<>();
        private final List<Path> logs = new ArrayList<>();

        private Deployment(final TopologyFabric fabric, final InaPlan plan, final int jobId, final String name,
            final PeerRun run, final int slots, final List<String> jvmOptions, final ChildProcesses children)
        {
            this.fabric = fabric;
            this.plan = plan;
            this.jobId = jobId;
            this.name = name;
            this.run = run;
            this.jvmOptions = jvmOptions;
            this.children = children;
            this.ps = onlyServer(plan);
            if (plan.workers().size() != run.workers())
            {
                throw new IllegalArgumentException("plan has " + plan.workers().size() + " workers, the run "
                    + run.workers());
            }
            this.psLog = run.workDir().resolve(name + "-ps.log");
            this.jobSpec = jobId + ":" + run.workers() + ":" + slots + ":" + SwitchJobConfig.DEFAULT_LANES;
        }

        /**
         * Pins the switches' flows and starts the parameter server and the switches of {@code plan} as job
         * {@code jobId} (1 to 100), each killed when {@code children} closes.
         */
        static Deployment startServers(final TopologyFabric fabric, final InaPlan plan, final int jobId,
            final String name, final PeerRun run, final int slots, final List<String> jvmOptions,
            final ChildProcesses children)
        {
            if (jobId < 1 || jobId > 100)
            {
                throw new IllegalArgumentException("job id " + jobId + " is not 1..100");
            }
            final Deployment job = new Deployment(fabric, plan, jobId, name, run, slots, jvmOptions, children);
            job.startServers();
            return job;
        }

        private void startServers()
        {
            final String psAddress = fabric.address(ps);
            final StringJoiner workersAt = new StringJoiner(",");
            for (final InaPlan.WorkerRoute route : plan.workers())
            {
                workersAt.add(fabric.address(route.worker()) + ":" + WORKER_PORT);
            }
            children.start(Placement.prefixed(fabric.exec(ps), InaggJvm.command(jvmOptions, List.of("ps", "--bind",
                psAddress + ":" + PS_PORT, "--job", jobSpec, "--workers-at", workersAt.toString()))), Map.of(), psLog);
            for (final Map.Entry<String, List<InaPlan.SwitchJobEntry>> table : plan.switchJobTables().entrySet())
            {
                final String sw = table.getKey();
                final StringJoiner local = new StringJoiner(",");
                for (final InaPlan.SwitchJobEntry row : table.getValue())
                {
                    for (final String contributor : row.contributors())
                    {
                        local.add(Integer.toString(rankOf(plan, contributor)));
                    }
                }
                // Rows of one PS at one switch are one job there, one partial stream: the first row's path.
                fabric.route(fabric.aggregatorAddress(sw), psAddress, table.getValue().getFirst().upstreamPath());
                // Results down the tree: the PS's result of the switch's workers comes back along that path reversed.
                fabric.route(psAddress, fabric.aggregatorAddress(sw),
                    table.getValue().getFirst().upstreamPath().reversed());
                children.start(Placement.prefixed(fabric.aggregatorExec(sw), InaggJvm.command(jvmOptions,
                    List.of("switch", "--bind", switchAt(sw), "--open", "--job", jobSpec, "--upstream",
                        psAddress + ":" + PS_PORT, "--local-workers", local.toString(), "--stats-interval", "0",
                        "--duration", Long.toString(run.timeoutS())))), Map.of(),
                    run.workDir().resolve(name + "-switch-" + sw + ".log"));
            }
        }

        private String switchAt(final String sw)
        {
            return fabric.aggregatorAddress(sw) + ":" + (SWITCH_PORT + jobId - 1);
        }

        /** Null once the parameter server listens, else why not by {@code deadline} (System.nanoTime). */
        String awaitServers(final long deadline) throws InterruptedException
        {
            return ChildProcesses.awaitText(psLog, "listening", deadline) ? null
                : "the parameter server of " + name + " did not start: "
                    + ChildProcesses.lastLine(ChildProcesses.read(psLog));
        }

        /** Pins the workers' flows and starts a worker on each worker's node. */
        void startWorkers(final List<String> workerOptions)
        {
            final String psAddress = fabric.address(ps);
            final int w = plan.workers().size();
            for (int rank = 0; rank < w; rank++)
            {
                final InaPlan.WorkerRoute route = plan.workers().get(rank);
                final InaPlan.Share share = route.shares().getFirst();
                final boolean direct = share.aggregateAt().equals(ps);
                final String target = direct ? psAddress + ":" + PS_PORT : switchAt(share.aggregateAt());
                final String workerAddress = fabric.address(route.worker());
                fabric.route(workerAddress, target.substring(0, target.indexOf(':')), share.path());
                final List<String> back = new ArrayList<>(share.path());
                if (!direct)
                {
                    final List<String> upstream = PlanLoad.upstreamOf(plan, share);
                    back.addAll(upstream.subList(1, upstream.size()));
                }
                fabric.route(psAddress, workerAddress, back.reversed());
                final Path log = run.workDir().resolve(name + "-worker-" + route.worker() + ".log");
                logs.add(log);
                final List<String> args = new ArrayList<>(List.of("worker", "--switch", target, "--bind",
                    workerAddress + ":" + WORKER_PORT, "--job-id", Integer.toString(jobId), "--workers",
                    Integer.toString(w), "--worker-id", Integer.toString(rank), "-n", Integer.toString(run.elements()),
                    "-i", Integer.toString(run.iterations()), "--warmup", Integer.toString(run.warmup()),
                    "--no-progress",
                    // the other workers' JVMs and the switches may take seconds to start on a loaded machine
                    "--peer-timeout-ms", "60000"));
                args.addAll(workerOptions);
                workers.add(children.start(Placement.prefixed(fabric.exec(route.worker()), InaggJvm.command(
                    jvmOptions, args)), Map.of(), log));
            }
        }

        List<Process> workers()
        {
            return workers;
        }

        /** The workers' logs, rank order. */
        List<Path> logs()
        {
            return logs;
        }

        /** The slowest worker's timing, every result checked ({@code ok}: every worker ended with status 0 in time). */
        PeerResult collect(final boolean ok)
        {
            return WorkerLogs.collect(name, run, logs, ok, plan.switchJobTables().size() + " switches summing, PS "
                + ps);
        }
    }

    /** The plan's one parameter server with a share. */
    static String onlyServer(final InaPlan plan)
    {
        final List<String> servers = plan.split().entrySet().stream().filter(e -> e.getValue() > 0)
            .map(Map.Entry::getKey).toList();
        if (servers.size() != 1)
        {
            throw new IllegalArgumentException("the fabric runs plans of one parameter server (a worker process is "
                + "one job), not " + servers.size() + ": " + plan.split());
        }
        return servers.getFirst();
    }

    private static int rankOf(final InaPlan plan, final String worker)
    {
        for (int rank = 0; rank < plan.workers().size(); rank++)
        {
            if (plan.workers().get(rank).worker().equals(worker))
            {
                return rank;
            }
        }
        throw new IllegalArgumentException("a switch table names worker '" + worker + "', which the plan lacks");
    }
}
