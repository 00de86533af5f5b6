package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;

import org.inagg.services.cli.ProcessCpu;

/**
 * {@code inagg local}: the switch and W workers in one JVM, over the in-process rings ({@code inproc}) or over DPDK
 * ring ports ({@code dpdk}, where DPDK loads: the run says why when it does not).
 */
public final class InaggLocalPeer implements Peer
{
    private final String transport;
    private final List<String> jvmOptions;

    /** @param transport {@code inproc} or {@code dpdk}, as {@code inagg local -t}. */
    public InaggLocalPeer(final String transport, final List<String> jvmOptions)
    {
        this.transport = transport;
        this.jvmOptions = List.copyOf(jvmOptions);
    }

    @Override
    public String name()
    {
        return "dpdk".equals(transport) ? "inagg local (DPDK rings)" : "inagg local (one JVM)";
    }

    @Override
    public String unavailableReason()
    {
        return null;
    }

    @Override
    public PeerResult run(final PeerRun run) throws InterruptedException
    {
        final Path log = run.workDir().resolve("inagg-local-" + transport + "-w" + run.workers() + ".log");
        final List<String> args = new ArrayList<>(List.of("local", "-t", transport, "-w",
            Integer.toString(run.workers()), "-n", Integer.toString(run.elements()), "-i",
            Integer.toString(run.iterations()), "--warmup", Integer.toString(run.warmup()), "--no-progress"));
        try (ChildProcesses children = new ChildProcesses())
        {
            final Process local = children.start(InaggJvm.command(jvmOptions, args), Map.of(), log);
            final boolean ok = ChildProcesses.awaitAll(List.of(local),
                System.nanoTime() + TimeUnit.SECONDS.toNanos(run.timeoutS()));
            final String text = ChildProcesses.read(log);
            final OptionalDouble rate = ChildProcesses.elementsPerSecond(text);
            if (!ok || rate.isEmpty())
            {
                final String reason = "inagg local -t " + transport + " did not finish within " + run.timeoutS()
                    + " s or failed: " + ChildProcesses.lastLine(text) + " (" + log + ")";
                // DPDK runs where its libraries and memory are: elsewhere it is a missing peer, not a failure.
                return "dpdk".equals(transport) && !local.isAlive() && local.exitValue() != 0
                    ? PeerResult.skipped(name(), run.workers(), reason)
                    : PeerResult.failed(name(), run.workers(), reason);
            }
            // One process holds the switch and every worker: its CPU over the timed all-reduces is the peer's.
            return PeerResult.measured(name(), run.workers(), rate.getAsDouble(), transport + " transport (its threads"
                + " spin, yield, then park up to 1 ms while they wait: its CPU counts much of the waiting)")
                .withCpuSecondsPerOp(ChildProcesses.lastNumber(ProcessCpu.WORKER, text) / 1e3);
        }
    }
}
