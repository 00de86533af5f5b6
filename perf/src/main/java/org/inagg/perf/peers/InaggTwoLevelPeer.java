package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

import org.inagg.p4.softswitch.SwitchJobConfig;

/**
 * inagg's two-level aggregation on a leaf-spine fabric ({@link FabricPlacement}): an {@code inagg ps} at the spine, an
 * {@code inagg switch --upstream} in every leaf summing the workers under it and sending that sum up as one PARTIAL
 * stream, and {@code inagg worker} processes on the hosts, each sending to its leaf's switch. The parameter server
 * answers every worker itself (docs/esa.md), so each uplink carries one stream up and one result per worker under the
 * leaf down: the bound is set by the downlink direction unless results are multicast at the leaf.
 */
public final class InaggTwoLevelPeer implements Peer
{
    /** The workers' fixed UDP port (the parameter server must know every worker's address). */
    static final int WORKER_PORT = 9101;
    static final int PS_PORT = 9100;

    private final List<String> jvmOptions;
    private final List<String> workerOptions;

    public InaggTwoLevelPeer(final List<String> jvmOptions, final List<String> workerOptions)
    {
        this.jvmOptions = List.copyOf(jvmOptions);
        this.workerOptions = List.copyOf(workerOptions);
    }

    @Override
    public String name()
    {
        return "inagg two-level (leaf switches + PS)";
    }

    @Override
    public String unavailableReason()
    {
        return null;
    }

    @Override
    public boolean runsAcrossHosts()
    {
        return true;
    }

    /** Without a fabric: one switch level, in-network aggregation's bound. */
    @Override
    public double boundSeconds(final int ranks, final long bytes, final double bitsPerSecond)
    {
        return LinkBounds.inaSeconds(bytes, SwitchJobConfig.DEFAULT_LANES, bitsPerSecond);
    }

    /**
     * Host links carry S each way; an uplink one sum up and one result down, which the leaf switch multicasts to its
     * hosts (the parameter server sends each round's result once per leaf: docs/esa.md, "Results down the tree").
     */
    @Override
    public double boundSeconds(final int ranks, final long bytes, final FabricPlacement fabric)
    {
        return LinkBounds.inaSeconds(bytes, SwitchJobConfig.DEFAULT_LANES, Math.min(fabric.hostBitsPerSecond(),
            fabric.uplinkBitsPerSecond()));
    }

    @Override
    public PeerResult run(final PeerRun run) throws InterruptedException
    {
        if (!(run.placement() instanceof FabricPlacement fabric))
        {
            return PeerResult.skipped(name(), run.workers(), "needs a leaf-spine fabric (bench-peers --leaves K)");
        }
        final String w = Integer.toString(run.workers());
        final String job = "1:" + w + ":" + SwitchJobConfig.DEFAULT_SLOTS + ":" + SwitchJobConfig.DEFAULT_LANES;
        final String psAt = fabric.switchAddress() + ":" + PS_PORT;
        try (ChildProcesses children = new ChildProcesses())
        {
            final StringJoiner workersAt = new StringJoiner(",");
            for (int rank = 0; rank < run.workers(); rank++)
            {
                workersAt.add(fabric.rankAddress(rank) + ":" + WORKER_PORT);
            }
            children.start(Placement.prefixed(fabric.switchExec(), InaggJvm.command(jvmOptions, List.of("ps", "--bind",
                psAt, "--job", job, "--workers-at", workersAt.toString()))), Map.of(),
                run.workDir().resolve("inagg-2level-ps-w" + w + ".log"));
            for (int leaf = 1; leaf <= fabric.leaves(); leaf++)
            {
                final StringJoiner local = new StringJoiner(",");
                for (int rank = 0; rank < run.workers(); rank++)
                {
                    if (fabric.leafOf(rank) == leaf)
                    {
                        local.add(Integer.toString(rank));
                    }
                }
                children.start(Placement.prefixed(fabric.leafExec(leaf), InaggJvm.command(jvmOptions, List.of("switch",
                    "--bind", fabric.leafAddress(leaf) + ":9000", "--open", "--job", job, "--upstream", psAt,
                    "--local-workers", local.toString(), "--stats-interval", "0", "--duration",
                    Long.toString(run.timeoutS())))), Map.of(),
                    run.workDir().resolve("inagg-2level-leaf" + leaf + "-w" + w + ".log"));
            }
            final List<Process> workers = new ArrayList<>();
            final List<Path> logs = new ArrayList<>();
            for (int rank = 0; rank < run.workers(); rank++)
            {
                final List<String> args = new ArrayList<>(List.of("worker", "--switch",
                    fabric.leafAddress(fabric.leafOf(rank)) + ":9000", "--bind", fabric.rankAddress(rank) + ":"
                        + WORKER_PORT, "--workers", w, "--worker-id", Integer.toString(rank), "-n",
                    Integer.toString(run.elements()), "-i", Integer.toString(run.iterations()), "--warmup",
                    Integer.toString(run.warmup()), "--no-progress"));
                args.addAll(workerOptions);
                final Path log = run.workDir().resolve("inagg-2level-worker-w" + w + "-" + rank + ".log");
                logs.add(log);
                workers.add(children.start(Placement.prefixed(fabric.rankExec(rank), InaggJvm.command(jvmOptions,
                    args)), Map.of(), log));
            }
            final boolean ok = ChildProcesses.awaitAll(workers,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(run.timeoutS()));
            return WorkerLogs.collect(name(), run, logs, ok, fabric.leaves() + " leaf switches summing their hosts "
                + "into a parameter server at the spine");
        }
    }
}
