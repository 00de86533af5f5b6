package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.regex.Pattern;

import org.inagg.services.cli.ProcessCpu;

/**
 * What {@code inagg worker} processes printed, as one {@link PeerResult}: the slowest worker's elements/s, every
 * worker's result within the fixed-point bound of the exact sum, the slowest p50, the share of retransmitted packets
 * and, where the switch's share is known, the CPU time of all the processes per all-reduce.
 */
public final class WorkerLogs
{
    private static final Pattern RETRANSMISSIONS = Pattern.compile("retransmissions\\s+([0-9,]+)");
    private static final Pattern PACKETS_SENT = Pattern.compile("packets sent\\s+([0-9,]+)");
    private static final Pattern WITHIN_BOUND = Pattern.compile("within bound\\s+yes");
    private static final Pattern P50 = Pattern.compile("per all-reduce\\s+min [0-9.]+ ms, p50 ([0-9.]+) ms");

    private WorkerLogs()
    {
    }

    /**
     * @param ok          whether every worker ended with status 0 in time.
     * @param description what the note starts with (the job's packets).
     */
    public static PeerResult collect(final String peer, final PeerRun run, final List<Path> logs, final boolean ok,
        final String description)
    {
        return collect(peer, run, logs, ok, description, Double.NaN);
    }

    /**
     * @param ok               whether every worker ended with status 0 in time.
     * @param description      what the note starts with (the job's packets).
     * @param switchCpuSeconds the switch process's CPU time over the timed all-reduces (all of them), NaN when not
     *                         known: then the result has no CPU figure (the workers' alone would understate it).
     */
    public static PeerResult collect(final String peer, final PeerRun run, final List<Path> logs, final boolean ok,
        final String description, final double switchCpuSeconds)
    {
        double slowest = Double.POSITIVE_INFINITY;
        double p50Ms = 0;
        long retransmissions = 0;
        double packets = 0;
        double workersCpuMs = 0;
        for (final Path log : logs)
        {
            final String text = ChildProcesses.read(log);
            final OptionalDouble rate = ChildProcesses.elementsPerSecond(text);
            if (!ok || rate.isEmpty())
            {
                return PeerResult.failed(peer, run.workers(), "a worker did not finish within " + run.timeoutS()
                    + " s or failed: " + ChildProcesses.lastLine(text) + " (" + log + ")");
            }
            if (!WITHIN_BOUND.matcher(text).find())
            {
                return PeerResult.failed(peer, run.workers(), "a worker's result was not within the fixed-point bound "
                    + "of the exact sum (" + log + ")");
            }
            slowest = Math.min(slowest, rate.getAsDouble());
            p50Ms = Math.max(p50Ms, last(P50, text));
            retransmissions += (long)last(RETRANSMISSIONS, text);
            packets += last(PACKETS_SENT, text);
            workersCpuMs += ChildProcesses.lastNumber(ProcessCpu.WORKER, text); // NaN when a worker did not say
        }
        final double switchCpuMs = switchCpuSeconds * 1e3 / run.iterations();
        final double cpuMs = workersCpuMs + switchCpuMs;
        final String cpu = Double.isNaN(cpuMs) ? "" : String.format(Locale.ROOT,
            "; CPU per all-reduce %.1f ms: workers %.1f, switch %.1f", cpuMs, workersCpuMs, switchCpuMs);
        return PeerResult.measured(peer, run.workers(), slowest, p50Ms / 1e3, String.format(Locale.ROOT,
            "%s; p50 %.2f ms (slowest worker); retransmissions %,d (%.2f%% of %,.0f packets sent)%s", description,
            p50Ms, retransmissions, packets > 0 ? 100.0 * retransmissions / packets : 0.0, packets, cpu))
            .withCpuSecondsPerOp(cpuMs / 1e3);
    }

    /** The number of the last match, 0 if none. */
    private static double last(final Pattern pattern, final String text)
    {
        final double value = ChildProcesses.lastNumber(pattern, text);
        return Double.isNaN(value) ? 0 : value;
    }
}
