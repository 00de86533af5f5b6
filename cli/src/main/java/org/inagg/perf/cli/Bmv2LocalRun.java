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
import java.util.function.LongSupplier;
import java.util.stream.IntStream;

import org.inagg.p4.control.JobSpec;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.perf.lab.Bmv2Lab;
import org.inagg.perf.lab.InaggProcess;
import org.inagg.perf.lab.WorkerReport;

/**
 * {@code inagg local --switch bmv2}: W unmodified {@code inagg worker} processes in network namespaces all-reduce
 * through bmv2 {@code simple_switch} running {@code inagg_v1model.p4}; then the same workers on the same hosts and
 * veths through {@code inagg switch} (the software switch as a process, simple_switch's ports bridged to it), and the
 * two results compared bit for bit and their rates side by side. Everything it set up is torn down on the way out, also
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
            final Target bmv2 = runWorkers(out, lab, job,
                () -> lab.control().counters().getOrDefault(SwitchCounter.RECEIVED, 0L));
            final Map<SwitchCounter, Long> counters = lab.control().counters();
            if (!bmv2.failures().isEmpty())
            {
                out.println("FAILED through bmv2: " + String.join("\n", bmv2.failures()));
                out.flush();
                return 1;
            }
            out.println("software switch: the same workers on the same hosts and veths, through inagg switch "
                + "(simple_switch stopped, its ports bridged)");
            out.flush();
            final InaggProcess softwareSwitch = lab.replaceBySoftwareSwitch(List.of("--open", "--job",
                JOB_ID + ":" + workers + ":" + slots + ":" + lanes));
            final Target software = runWorkers(out, lab, job, null);
            softwareSwitch.kill();
            if (!software.failures().isEmpty())
            {
                out.println("FAILED through the software switch: " + String.join("\n", software.failures()));
                out.flush();
                return 1;
            }
            return report(out, bmv2, software, counters);
        }
    }

    /** One target's run: the workers' reports and the wall time from their start to the last one's end. */
    private record Target(List<WorkerReport> reports, double seconds, List<String> failures)
    {
        String crc()
        {
            final String crc = reports.getFirst().crc32();
            return reports.stream().allMatch(r -> crc.equals(r.crc32())) ? crc : null;
        }

        double slowestRate()
        {
            return reports.stream().mapToDouble(WorkerReport::elementsPerSecond).min().orElse(0);
        }

        long retransmissions()
        {
            return reports.stream().mapToLong(WorkerReport::retransmissions).sum();
        }
    }

    private Target runWorkers(
        final PrintWriter out, final Bmv2Lab lab, final JobSpec job, final LongSupplier switchReceived)
        throws InterruptedException
    {
        final long start = System.nanoTime();
        final List<InaggProcess> processes = lab.startWorkers(job, List.of("-n", Integer.toString(elements),
            "-i", Integer.toString(iterations), "--seed", Long.toString(seed), "--loss", Double.toString(loss),
            "--retransmit-us", Long.toString(retransmitUs), "--peer-timeout-ms", Long.toString(peerTimeoutMs)));
        final long expectedPackets = (long)workers * iterations * ((elements + lanes - 1) / lanes + 1);
        final boolean report = progress && switchReceived != null;
        while (processes.stream().anyMatch(p -> p.process().isAlive()))
        {
            Thread.sleep(report ? 2_000 : 50);
            if (report && processes.stream().anyMatch(p -> p.process().isAlive()))
            {
                final long received = switchReceived.getAsLong();
                out.printf(Locale.ROOT, "  %5.1f s: switch received %,d packets (%.0f%% of the %,d needed "
                    + "without loss)%n", (System.nanoTime() - start) / 1e9, received,
                    Math.min(100.0, 100.0 * received / expectedPackets), expectedPackets);
                out.flush();
            }
        }
        final double seconds = (System.nanoTime() - start) / 1e9;
        final List<WorkerReport> reports = Bmv2Lab.await(processes, 60);
        final List<String> failed = new ArrayList<>();
        for (final WorkerReport r : reports)
        {
            if (!r.ok())
            {
                failed.add("worker " + r.worker() + " (exit " + r.exitCode() + "):\n" + r.output().strip().indent(4));
            }
        }
        return new Target(reports, seconds, failed);
    }

    private int report(
        final PrintWriter out, final Target bmv2, final Target software, final Map<SwitchCounter, Long> counters)
    {
        final String crc = bmv2.crc();
        final boolean identical = crc != null && crc.equals(software.crc());
        out.println();
        out.printf(Locale.ROOT, "  %-30s %-22s %-22s %s%n", "", "bmv2 simple_switch", "software switch", "ratio");
        out.printf(Locale.ROOT, "  %-30s %-22.3e %-22.3e %.4fx%n", "elements/s (slowest worker)",
            bmv2.slowestRate(), software.slowestRate(), bmv2.slowestRate() / software.slowestRate());
        out.printf(Locale.ROOT, "  %-30s %-22.3f %-22.3f%n", "wall time, s (JVM start incl.)", bmv2.seconds(),
            software.seconds());
        out.printf(Locale.ROOT, "  %-30s %-22.0f %-22s%n", "switch packets in/s (wall)",
            counters.getOrDefault(SwitchCounter.RECEIVED, 0L) / bmv2.seconds(), "");
        out.printf(Locale.ROOT, "  %-30s %-22s %-22s%n", "retransmissions", String.format("%,d",
            bmv2.retransmissions()), String.format("%,d", software.retransmissions()));
        out.printf(Locale.ROOT, "  %-30s %-22s %-22s%n", "result crc32 (all workers)", bmv2.crc(), software.crc());
        out.println();
        out.printf("  %-30s every worker within the fixed-point bound of docs/protocol.md: yes%n", "result check");
        out.printf("  %-30s %s%n", "bmv2 vs software switch", identical ? "bit-identical" : "DIFFERENT");
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
        return identical ? 0 : 2;
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
