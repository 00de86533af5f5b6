package org.inagg.perf.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

import org.inagg.p4.control.JobSpec;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.perf.lab.Bmv2Lab;
import org.inagg.perf.lab.InaggProcess;
import org.inagg.perf.lab.WorkerReport;

/**
 * {@code inagg local --switch bmv2}: W unmodified {@code inagg worker} processes in network namespaces all-reduce
 * through bmv2 {@code simple_switch} running {@code inagg_v1model.p4}; then the same inputs through the in-process
 * software switch, and the two results compared bit for bit. Everything it set up is torn down on the way out, also
 * on failure and on Ctrl-C ({@link Bmv2Lab}).
 *
 * @param workers        W.
 * @param elements       float32 elements per tensor.
 * @param iterations     all-reduces per worker.
 * @param slots          the job's slots (its window): bmv2 drops what its queues cannot hold, so keep it small.
 * @param lanes          lanes per packet (at most 256 on the v1model program).
 * @param loss           fault rate injected in the workers' transports.
 * @param seed           seed of the gradients.
 * @param retransmitUs   the workers' minimum retransmission timeout: bmv2 takes milliseconds per packet.
 * @param peerTimeoutMs  the workers' peer timeout.
 * @param progress       print the switch's packet count while the job runs.
 */
record Bmv2LocalRun(
    int workers, int elements, int iterations, int slots, int lanes, double loss, long seed, long retransmitUs,
    long peerTimeoutMs, boolean progress)
{
    static final int JOB_ID = 1;
    static final int MULTICAST_GROUP = 1;

    int run(final PrintWriter out) throws InterruptedException
    {
        out.printf(Locale.ROOT, "inagg local: %d worker processes through bmv2 simple_switch (inagg_v1model.p4), "
            + "%,d float32 elements x %d iterations, %d lanes/packet, %d slots, loss %.3f%n", workers, elements,
            iterations, lanes, slots, loss);
        out.flush();
        final Path work = workFolder();
        try (Bmv2Lab lab = Bmv2Lab.start(workers, work, out))
        {
            final JobSpec job = lab.addSlotJob(JOB_ID, slots, 0, lanes, MULTICAST_GROUP,
                IntStream.rangeClosed(1, workers).toArray());
            out.printf("bmv2: job %d programmed (%d workers, slots 0..%d, multicast group %d); worker logs in %s%n",
                JOB_ID, workers, slots - 1, MULTICAST_GROUP, work);
            out.flush();
            final long start = System.nanoTime();
            final List<InaggProcess> processes = lab.startWorkers(job, List.of("-n", Integer.toString(elements),
                "-i", Integer.toString(iterations), "--seed", Long.toString(seed), "--loss", Double.toString(loss),
                "--retransmit-us", Long.toString(retransmitUs), "--peer-timeout-ms", Long.toString(peerTimeoutMs)));
            final long expectedPackets = (long)workers * iterations * ((elements + lanes - 1) / lanes + 1);
            while (processes.stream().anyMatch(p -> p.process().isAlive()))
            {
                Thread.sleep(progress ? 2_000 : 100);
                if (progress && processes.stream().anyMatch(p -> p.process().isAlive()))
                {
                    final long received = lab.control().counters().getOrDefault(SwitchCounter.RECEIVED, 0L);
                    out.printf(Locale.ROOT, "  %5.1f s: switch received %,d packets (%.0f%% of the %,d needed "
                        + "without loss)%n", (System.nanoTime() - start) / 1e9, received,
                        Math.min(100.0, 100.0 * received / expectedPackets), expectedPackets);
                    out.flush();
                }
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            final List<WorkerReport> reports = Bmv2Lab.await(processes, 60);
            final Map<SwitchCounter, Long> counters = lab.control().counters();
            return report(out, reports, counters, seconds);
        }
    }

    private int report(
        final PrintWriter out, final List<WorkerReport> reports, final Map<SwitchCounter, Long> counters,
        final double seconds)
    {
        final List<String> failed = new ArrayList<>();
        for (final WorkerReport report : reports)
        {
            if (!report.ok())
            {
                failed.add("worker " + report.worker() + " (exit " + report.exitCode() + "):\n"
                    + report.output().strip().indent(4));
            }
        }
        out.println();
        if (!failed.isEmpty())
        {
            out.println("FAILED: " + String.join("\n", failed));
            out.flush();
            return 1;
        }
        final String crc = reports.getFirst().crc32();
        final boolean identical = reports.stream().allMatch(r -> crc.equals(r.crc32()));
        final String software = String.format("%08x",
            SyntheticGradients.softwareSwitchCrc32(workers, elements, seed, slots, lanes));
        final double slowest = reports.stream().mapToDouble(WorkerReport::elementsPerSecond).min().orElse(0);
        out.printf(Locale.ROOT, "  %-26s %.3f s (workers started to last worker done, JVM start included)%n", "time",
            seconds);
        out.printf(Locale.ROOT, "  %-26s %.3e (slowest worker, its own timing)%n", "elements/s", slowest);
        out.printf(Locale.ROOT, "  %-26s %,d%n", "retransmissions",
            reports.stream().mapToLong(WorkerReport::retransmissions).sum());
        out.printf("  %-26s every worker within the fixed-point bound of docs/protocol.md: yes%n", "result check");
        out.printf("  %-26s all %d workers crc32 %s: %s%n", "workers agree", reports.size(), crc,
            identical ? "yes" : "NO");
        out.printf("  %-26s same inputs through the in-process software switch: crc32 %s: %s%n", "software switch",
            software, software.equals(crc) ? "bit-identical" : "DIFFERENT");
        out.println();
        out.println("bmv2 counters (inagg_counters):");
        counters.forEach((counter, value) ->
        {
            if (value != 0)
            {
                out.printf(Locale.ROOT, "  %-22s %,12d  %s%n", counter.name(), value, counter.label());
            }
        });
        out.flush();
        return identical && software.equals(crc) ? 0 : 2;
    }

    private static Path workFolder()
    {
        try
        {
            return Files.createTempDirectory("inagg-local-bmv2-");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("creating a work folder", ex);
        }
    }
}
