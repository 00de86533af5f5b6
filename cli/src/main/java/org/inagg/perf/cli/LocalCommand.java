package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.perf.cluster.ClusterOptions;
import org.inagg.perf.cluster.LocalCluster;
import org.inagg.perf.cluster.TransportKind;
import org.inagg.protocol.WorkerCounter;
import org.inagg.services.cli.CaptureOptions;
import org.inagg.services.cli.CountersOptions;
import org.inagg.services.cli.ProcessCpu;
import org.inagg.services.cli.ProgressBar;
import org.inagg.services.cli.SyntheticGradients;
import org.inagg.transport.FaultConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code inagg local}: a software switch and W workers in this process all-reduce synthetic gradients. */
@Command(
    name = "local",
    mixinStandardHelpOptions = true,
    description = "All-reduce synthetic gradients through a software switch with W workers in this process, "
        + "then print throughput, retransmissions and the error against a double-precision sum.")
final class LocalCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = {"-w", "--workers"}, defaultValue = "4", description = "Workers in the job (default ${DEFAULT-VALUE}).")
    private int workers;

    @Option(names = {"-n", "--elements"}, defaultValue = "4194304",
        description = "Float32 elements per tensor (default ${DEFAULT-VALUE}).")
    private int elements;

    @Option(names = {"-i", "--iterations"},
        description = "All-reduces to run (default 20; 1 with --switch bmv2).")
    private Integer iterations;

    @Option(names = "--warmup", defaultValue = "3",
        description = "Untimed all-reduces first, for the JIT (default ${DEFAULT-VALUE}).")
    private int warmup;

    @Option(names = {"-t", "--transport"}, defaultValue = "inproc",
        description = "inproc (lock-free rings), udp (loopback sockets) or dpdk (net_ring ports, no hugepages) "
            + "(default ${DEFAULT-VALUE}).")
    private String transport;

    @Option(names = "--lanes", defaultValue = "256",
        description = "int32 lanes per packet: 64, 128, 256, up to 363 for a 1500-byte MTU (default ${DEFAULT-VALUE}).")
    private int lanes;

    @Option(names = "--slots",
        description = "Switch slots per job = window (default 128; 16 with --switch bmv2, whose queues hold little).")
    private Integer slots;

    @Option(names = "--loss", defaultValue = "0",
        description = "Fault rate: drop, duplicate and delay/reorder each this fraction of received packets (default ${DEFAULT-VALUE}).")
    private double loss;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the gradients and the faults (default ${DEFAULT-VALUE}).")
    private long seed;

    @Option(names = "--retransmit-us",
        description = "Minimum retransmission timeout in microseconds (default 2000; 100000 with --switch bmv2, "
            + "which takes about a millisecond per packet).")
    private Long retransmitUs;

    @Option(names = "--switch", defaultValue = "software",
        description = "software (the Java switch in this process) or bmv2 (inagg_v1model.p4 on simple_switch, "
            + "workers as processes in network namespaces; needs root, the P4 tools of INAGG_P4TOOLS, iproute2 and "
            + "ethtool; see docs/p4.md) (default ${DEFAULT-VALUE}).")
    private String switchKind;

    @Option(names = "--peer-timeout-ms", defaultValue = "10000",
        description = "Fail when no progress for this long (default ${DEFAULT-VALUE}).")
    private long peerTimeoutMs;

    @Option(names = "--threads", defaultValue = "1",
        description = "Agent threads for the switch and workers (default ${DEFAULT-VALUE}).")
    private int threads;

    @Option(names = "--idle", defaultValue = "backoff", description = "Idle strategy: spin, yield, backoff, sleep-ns[:N], noop (default ${DEFAULT-VALUE}).")
    private String idle;

    @Option(names = "--no-progress", description = "Do not draw the progress bar.")
    private boolean noProgress;

    @Mixin
    private CaptureOptions capture;

    @Mixin
    private CountersOptions countersOptions;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final boolean bmv2 = switch (switchKind)
        {
            case "software" -> false;
            case "bmv2" -> true;
            default -> throw new IllegalArgumentException("--switch must be software or bmv2, not " + switchKind);
        };
        final int iterations = this.iterations != null ? this.iterations : bmv2 ? 1 : 20;
        final int slots = this.slots != null ? this.slots : bmv2 ? 16 : 128;
        final long retransmitUs = this.retransmitUs != null ? this.retransmitUs : bmv2 ? 100_000 : 2000;
        if (bmv2)
        {
            if (capture.file() != null)
            {
                throw new IllegalArgumentException("--pcap captures at the Java switch; with --switch bmv2 capture "
                    + "on the lab's interfaces instead (tcpdump -i <veth> -w FILE)");
            }
            if (countersOptions.metricsPort() != 0 || countersOptions.directory() != null)
            {
                throw new IllegalArgumentException("--metrics-port and --counters-dir are this process's counters; "
                    + "with --switch bmv2 the workers are processes with counter files of their own (inagg stat "
                    + "reads them) and bmv2's counters are printed at the end");
            }
            if (!"inproc".equals(transport) || threads != 1)
            {
                throw new IllegalArgumentException("--switch bmv2 runs worker processes over UDP through bmv2's "
                    + "ports: --transport and --threads do not apply");
            }
            if (elements < 1 || iterations < 1)
            {
                throw new IllegalArgumentException("--elements and --iterations must be positive");
            }
            return new Bmv2LocalRun(workers, elements, iterations, slots, lanes, loss, seed, retransmitUs,
                peerTimeoutMs, !noProgress).run(out);
        }
        final TransportKind kind = TransportKind.valueOf(transport.toUpperCase(java.util.Locale.ROOT));
        if (elements < 1 || iterations < 1 || warmup < 0)
        {
            throw new IllegalArgumentException("--elements and --iterations must be positive, --warmup not negative");
        }
        org.inagg.services.cli.TensorMemory.require("-n/--elements", elements, Float.BYTES, 2L * workers + 2,
            "a source and a result per worker, and the reference sum in doubles, as two");
        final ClusterOptions options = new ClusterOptions(workers, slots, lanes, kind,
            loss > 0 ? FaultConfig.lossy(loss, seed) : FaultConfig.NONE,
            Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(retransmitUs)), Duration.ofMillis(peerTimeoutMs), idle,
            threads);

        out.printf("inagg local: %d workers, %s transport, %,d float32 elements x %d iterations, %d lanes/packet, "
            + "%d slots, loss %.3f%n", workers, kind.name().toLowerCase(java.util.Locale.ROOT), elements, iterations,
            lanes, slots, loss);
        out.flush();
        final float[][] sources = new float[workers][elements];
        final float[][] results = new float[workers][elements];
        for (int w = 0; w < workers; w++)
        {
            SyntheticGradients.fill(sources[w], w, 0, seed);
        }
        final double[] reference = SyntheticGradients.reference(elements, workers, 0, seed);

        final Histogram latencyUs = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
        try (LocalCluster cluster = LocalCluster.start(options, capture.writer(), countersOptions.open("local",
            "local " + workers + " workers, " + kind.name().toLowerCase(java.util.Locale.ROOT) + ", " + lanes
                + " lanes, " + slots + " slots", LocalCluster.countersCapacity(workers), out)))
        {
            for (int i = 0; i < warmup; i++)
            {
                cluster.allReduce(sources, results);
            }
            final long sentBefore = cluster.counters().sum(WorkerCounter.PACKETS_SENT.typeId());
            final long bytesBefore = cluster.counters().sum(WorkerCounter.PAYLOAD_BYTES_SENT.typeId());
            final long retransmitBefore = cluster.counters().sum(WorkerCounter.RETRANSMISSIONS.typeId());
            final long switchBefore = cluster.softwareSwitch().counter(SwitchCounter.RECEIVED);
            final ProgressBar progress = new ProgressBar(System.err, iterations, !noProgress);
            final long cpuStart = ProcessCpu.nanos();
            final long start = System.nanoTime();
            for (int i = 0; i < iterations; i++)
            {
                final long t0 = System.nanoTime();
                cluster.allReduce(sources, results);
                final long t1 = System.nanoTime();
                latencyUs.recordValue(TimeUnit.NANOSECONDS.toMicros(t1 - t0));
                final double rate = (double)elements * (i + 1) / ((t1 - start) / 1e9);
                progress.update(i + 1, String.format("%.1f M elements/s", rate / 1e6));
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            final long cpuNanos = cpuStart < 0 ? -1 : ProcessCpu.nanos() - cpuStart;
            final long packets = cluster.counters().sum(WorkerCounter.PACKETS_SENT.typeId()) - sentBefore;
            final long payload = cluster.counters().sum(WorkerCounter.PAYLOAD_BYTES_SENT.typeId()) - bytesBefore;
            final long retransmissions = cluster.counters().sum(WorkerCounter.RETRANSMISSIONS.typeId())
                - retransmitBefore;
            final long switchReceived = cluster.softwareSwitch().counter(SwitchCounter.RECEIVED) - switchBefore;

            boolean identical = true;
            for (int w = 1; w < workers; w++)
            {
                identical &= java.util.Arrays.equals(results[w], results[0]);
            }
            final double[] error = SyntheticGradients.maxError(results[0], reference);

            out.println();
            out.printf("  %-26s %.3f s (%d all-reduces)%n", "time", seconds, iterations);
            out.printf("  %-26s p50 %.2f ms, p99 %.2f ms, max %.2f ms%n", "per all-reduce",
                latencyUs.getValueAtPercentile(50) / 1e3, latencyUs.getValueAtPercentile(99) / 1e3,
                latencyUs.getMaxValue() / 1e3);
            out.printf("  %-26s %.3e%n", "elements/s (tensor)", elements * (double)iterations / seconds);
            out.printf("  %-26s %.3e (workers' packets; switch received %.3e/s)%n", "packets/s",
                packets / seconds, switchReceived / seconds);
            out.printf("  %-26s %.3f Gb/s all workers, %.3f Gb/s per worker%n", "payload sent",
                payload * 8 / seconds / 1e9, payload * 8 / seconds / 1e9 / workers);
            out.printf("  %-26s %,d (%.4f%% of packets)%n", "retransmissions", retransmissions,
                packets == 0 ? 0 : 100.0 * retransmissions / packets);
            out.printf("  %-26s abs %.3e, rel %.3e (vs double-precision sum); all workers identical: %s%n",
                "max error", error[0], error[1], identical ? "yes" : "NO");
            final String cpu = ProcessCpu.workerLine(cpuNanos, iterations);
            if (cpu != null)
            {
                out.println(cpu); // the switch and every worker: one process
            }
            out.println();
            out.println("counters:");
            out.print(cluster.describeCounters());
            out.flush();
            return identical ? 0 : 2;
        }
        finally
        {
            countersOptions.close();
            capture.report(out);
        }
    }
}
