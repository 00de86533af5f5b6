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
        final String ps = onlyServer(plan);
        final int w = plan.workers().size();
        if (w != run.workers())
        {
            throw new IllegalArgumentException("plan has " + w + " workers, the run " + run.workers());
        }
        final String job = "1:" + w + ":" + slots + ":" + SwitchJobConfig.DEFAULT_LANES;
        final String psAddress = fabric.address(ps);
        final List<String> workerAddresses = new ArrayList<>();
        final StringJoiner workersAt = new StringJoiner(",");
        for (final InaPlan.WorkerRoute route : plan.workers())
        {
            workerAddresses.add(fabric.address(route.worker()));
            workersAt.add(fabric.address(route.worker()) + ":" + WORKER_PORT);
        }
        try (ChildProcesses children = new ChildProcesses())
        {
            final Path psLog = run.workDir().resolve(name + "-ps.log");
            children.start(Placement.prefixed(fabric.exec(ps), InaggJvm.command(jvmOptions, List.of("ps", "--bind",
                psAddress + ":" + PS_PORT, "--job", job, "--workers-at", workersAt.toString()))), Map.of(), psLog);
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
                    List.of("switch", "--bind", fabric.aggregatorAddress(sw) + ":" + SWITCH_PORT, "--open", "--job",
                        job, "--upstream", psAddress + ":" + PS_PORT, "--local-workers", local.toString(),
                        "--stats-interval", "0", "--duration", Long.toString(run.timeoutS())))), Map.of(),
                    run.workDir().resolve(name + "-switch-" + sw + ".log"));
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(run.timeoutS());
            if (!ChildProcesses.awaitText(psLog, "listening", deadline))
            {
                return PeerResult.failed(name, w, "the parameter server did not start: "
                    + ChildProcesses.lastLine(ChildProcesses.read(psLog)));
            }
            final List<Process> workers = new ArrayList<>();
            final List<Path> logs = new ArrayList<>();
            for (int rank = 0; rank < w; rank++)
            {
                final InaPlan.WorkerRoute route = plan.workers().get(rank);
                final InaPlan.Share share = route.shares().getFirst();
                final boolean direct = share.aggregateAt().equals(ps);
                final String target = direct ? psAddress + ":" + PS_PORT
                    : fabric.aggregatorAddress(share.aggregateAt()) + ":" + SWITCH_PORT;
                fabric.route(workerAddresses.get(rank), target.substring(0, target.indexOf(':')), share.path());
                final List<String> back = new ArrayList<>(share.path());
                if (!direct)
                {
                    final List<String> upstream = PlanLoad.upstreamOf(plan, share);
                    back.addAll(upstream.subList(1, upstream.size()));
                }
                fabric.route(psAddress, workerAddresses.get(rank), back.reversed());
                final Path log = run.workDir().resolve(name + "-worker-" + route.worker() + ".log");
                logs.add(log);
                final List<String> args = new ArrayList<>(List.of("worker", "--switch", target, "--bind",
                    workerAddresses.get(rank) + ":" + WORKER_PORT, "--workers", Integer.toString(w), "--worker-id",
                    Integer.toString(rank), "-n", Integer.toString(run.elements()), "-i",
                    Integer.toString(run.iterations()), "--warmup", Integer.toString(run.warmup()), "--no-progress",
                    // the other workers' JVMs and the switches may take seconds to start on a loaded machine
                    "--peer-timeout-ms", "60000"));
                args.addAll(workerOptions);
                workers.add(children.start(Placement.prefixed(fabric.exec(route.worker()), InaggJvm.command(
                    jvmOptions, args)), Map.of(), log));
            }
            final boolean ok = ChildProcesses.awaitAll(workers, deadline);
            return WorkerLogs.collect(name, run, logs, ok, plan.switchJobTables().size() + " switches summing, "
                + "PS " + ps);
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
