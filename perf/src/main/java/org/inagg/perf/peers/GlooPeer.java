package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;

/**
 * gloo through torch.distributed: W Python processes on the loopback interface (or one on each host of an emulated
 * cluster), rendezvous by env:// at rank 0, each running {@code gloo_allreduce.py}; CPU tensors, one intra-op thread
 * per rank. A run counts only if rank 0 also checked a sum ({@code result ok}).
 */
public final class GlooPeer implements Peer
{
    private final String python;
    private String unavailable;
    private boolean probed;

    /** @param python the Python interpreter with torch (e.g. {@code python3}, a venv's {@code bin/python}). */
    public GlooPeer(final String python)
    {
        this.python = python;
    }

    @Override
    public String name()
    {
        return "gloo";
    }

    @Override
    public boolean runsAcrossHosts()
    {
        return true;
    }

    @Override
    public String unavailableReason()
    {
        if (!probed)
        {
            probed = true;
            try
            {
                if (!ChildProcesses.succeeds(List.of(python, "-c",
                    "import torch.distributed as d, sys; sys.exit(0 if d.is_available() and d.is_gloo_available() else 1)"),
                    120))
                {
                    unavailable = python + " cannot import torch.distributed with gloo (pip install torch, or "
                        + "--python PATH to an interpreter that has it)";
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                unavailable = "interrupted while probing " + python;
            }
        }
        return unavailable;
    }

    @Override
    public PeerResult run(final PeerRun run) throws InterruptedException
    {
        final Path script = ChildProcesses.resource("gloo_allreduce.py", run.workDir());
        final Placement placement = run.placement();
        final int port = placement.isLoopback() ? ChildProcesses.freePort(false) : 29500; // fresh namespaces
        try (ChildProcesses children = new ChildProcesses())
        {
            final List<Process> ranks = new ArrayList<>();
            for (int rank = 0; rank < run.workers(); rank++)
            {
                ranks.add(children.start(Placement.prefixed(placement.rankExec(rank), List.of(python,
                        script.toString(), Integer.toString(run.elements()), Integer.toString(run.iterations()),
                        Integer.toString(run.warmup()))),
                    environment(placement, rank, run.workers(), port),
                    run.workDir().resolve("gloo-w" + run.workers() + "-rank" + rank + ".log")));
            }
            final boolean ok = ChildProcesses.awaitAll(ranks,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(run.timeoutS()));
            final Path log0 = run.workDir().resolve("gloo-w" + run.workers() + "-rank0.log");
            final String text = ChildProcesses.read(log0);
            final OptionalDouble rate = ChildProcesses.elementsPerSecond(text);
            if (!ok || rate.isEmpty() || !text.contains("result ok"))
            {
                return PeerResult.failed(name(), run.workers(), "gloo ranks did not finish within " + run.timeoutS()
                    + " s or failed: " + ChildProcesses.lastLine(text) + " (" + log0 + ")");
            }
            return PeerResult.measured(name(), run.workers(), rate.getAsDouble(), ChildProcesses.p50Seconds(text),
                "torch.distributed gloo, CPU").withCpuSecondsPerOp(ChildProcesses.cpuSecondsPerCall(text));
        }
    }

    private static Map<String, String> environment(final Placement placement, final int rank, final int workers,
        final int port)
    {
        final Map<String, String> env = new java.util.HashMap<>(placement.rankEnvironment());
        env.putAll(Map.of("RANK", Integer.toString(rank), "WORLD_SIZE", Integer.toString(workers), "MASTER_ADDR",
            placement.rankAddress(0), "MASTER_PORT", Integer.toString(port), "OMP_NUM_THREADS", "1"));
        return env;
    }
}
