package org.inagg.perf.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.inagg.perf.lab.ClusterBench;
import org.inagg.perf.lab.ClusterTable;
import org.inagg.perf.lab.EmulatedCluster;
import org.inagg.perf.lab.HostNetwork;
import org.inagg.perf.lab.LeafSpineFabric;
import org.inagg.perf.lab.LinkRate;
import org.inagg.perf.peers.GlooPeer;
import org.inagg.perf.peers.InaggLocalPeer;
import org.inagg.perf.peers.InaggProcessPeer;
import org.inagg.perf.peers.InaggTwoLevelPeer;
import org.inagg.perf.peers.OpenMpiPeer;
import org.inagg.perf.peers.Peer;
import org.inagg.perf.peers.PeerBench;
import org.inagg.perf.peers.PeerChart;
import org.inagg.perf.peers.PeerResult;
import org.inagg.perf.peers.PeerTable;
import org.inagg.perf.profile.ProfileOptions;
import org.inagg.perf.profile.ProfileReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code inagg bench-peers}: the all-reduces a user already has (gloo, Open MPI) beside inagg's process path, its
 * in-process path and its DPDK path, same world sizes and tensor, one table with ratios to gloo, one with each peer's
 * CPU per all-reduce, and PNG charts of both.
 */
@Command(
    name = "bench-peers",
    mixinStandardHelpOptions = true,
    description = "Measure gloo (torch.distributed), Open MPI, inagg's switch + worker processes over UDP, inagg local "
        + "(one JVM) and inagg over DPDK rings on the same float32 tensor at each world size; print one table with "
        + "ratios to gloo and one with each peer's CPU per all-reduce, and write PNG charts. A peer that is not "
        + "installed is named and skipped.")
final class BenchPeersCommand implements Callable<Integer>
{
    static final String ALL_PEERS = "gloo,mpi,inagg-udp,inagg-udp-64k,inagg-local,inagg-dpdk";
    /** Peers that only an emulated fabric runs, named with --peers. */
    static final String FABRIC_PEERS = "inagg-2level";
    /**
     * Peers run only when named: inagg's UDP processes with packets that fill the links' MTU (also beyond 1500), and
     * with the P4 programs' 256 lanes.
     */
    static final String EXTRA_PEERS = "inagg-udp-mtu,inagg-udp-p4";

    @Spec
    private CommandSpec spec;

    @Option(names = {"-w", "--workers"}, split = ",", defaultValue = "2,4",
        description = "World sizes, comma separated (default ${DEFAULT-VALUE}).")
    List<Integer> worldSizes;

    @Option(names = {"-n", "--elements"}, defaultValue = "4194304",
        description = "float32 elements per tensor (default ${DEFAULT-VALUE}).")
    int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "10", description = "Timed all-reduces (default ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = "--warmup", defaultValue = "20",
        description = "Untimed all-reduces first, every peer alike (default ${DEFAULT-VALUE}: an inagg JVM spends about "
            + "8 s of CPU compiling on its first all-reduces, so with 2 the timed ones measured its JIT, not its "
            + "datapath; docs/performance.md).")
    int warmup;

    @Option(names = "--peers", split = ",", defaultValue = ALL_PEERS,
        description = "Which peers, comma separated, of " + ALL_PEERS + ", " + EXTRA_PEERS + " (inagg's UDP "
            + "processes with packets that fill the MTU, jumbo frames too; with the P4 programs' 256 lanes, the "
            + "switch's default before it filled the MTU) and on a leaf-spine fabric (--leaves) "
            + FABRIC_PEERS + " (default: " + ALL_PEERS + ").")
    List<String> peerNames;

    @Option(names = "--python", description = "Python with torch (gloo) and mpi4py (Open MPI without mpicc) "
        + "(default: $INAGG_PYTHON, else python3).")
    String python;

    @Option(names = "--chart", defaultValue = "bench-peers.png", description = "PNG chart to write, and beside it "
        + "NAME-cpu.png, the CPU per all-reduce (loopback runs); 'none' for none (default ${DEFAULT-VALUE}).")
    String chart;

    @Option(names = "--work-dir", description = "Folder for the runs' logs (default: a new temporary folder).")
    Path workDir;

    @Option(names = "--timeout-s", defaultValue = "300",
        description = "Seconds one peer's run may take before its processes are killed (default ${DEFAULT-VALUE}).")
    long timeoutS;

    @Option(names = "--worker-option", description = "Extra option of every `inagg worker` (repeatable), e.g. "
        + "--worker-option=--idle=spin.")
    List<String> workerOptions = new ArrayList<>();

    @Option(names = "--jvm-option", description = "Extra JVM option of every inagg process (repeatable), e.g. a JFR "
        + "recording.")
    List<String> jvmOptions = new ArrayList<>();

    @Option(names = "--profile", paramLabel = "DIR",
        description = "Profile the inagg processes with async-profiler (CPU, kernel frames included) over their steady "
            + "state: each worker its timed all-reduces, the switch its run after the warm-up. DIR gets one flame graph "
            + "per process (ROLE-PID.html), its collapsed stacks and summary.md, where each role's CPU went (quantize, "
            + "dequantize, aggregate, send, receive, wait, the rest); best with one peer and one world size, e.g. "
            + "--peers inagg-udp -w 4.")
    Path profile;

    @Option(names = "--link-rate", split = ",", paramLabel = "RATE",
        description = "Run on an emulated cluster instead of this machine's loopback: one host per rank in a network "
            + "namespace, every link limited to RATE both ways (tbf), one cluster per world size and rate, e.g. "
            + "--link-rate 50mbit,100mbit,1gbit; the table gives each peer's bound on those links (needs root; "
            + "docs/cluster.md).")
    List<String> linkRates = new ArrayList<>();

    @Option(names = "--leaves", defaultValue = "0",
        description = "With --link-rate: a leaf-spine fabric of this many leaf switches instead of one switch, the "
            + "hosts spread over them; --link-rate is then the host links' rate (default ${DEFAULT-VALUE}: one "
            + "switch).")
    int leaves;

    @Option(names = "--uplink-rate", paramLabel = "RATE",
        description = "With --leaves: each leaf-to-spine link's rate (default: the host links' rate).")
    String uplinkRate;

    @Option(names = "--mtu", defaultValue = "1500", description = "The emulated links' MTU (default ${DEFAULT-VALUE}); "
        + "above 1500, inagg's UDP processes send packets that fill it (2048 lanes in 16 slots at 9000).")
    int mtu;

    @Option(names = "--queue-ms", defaultValue = "" + EmulatedCluster.QUEUE_MS_DEFAULT,
        description = "Milliseconds of traffic an emulated link queues before it drops (default ${DEFAULT-VALUE}).")
    int queueMs;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        if (elements < 1 || iterations < 1 || warmup < 0 || worldSizes.stream().anyMatch(w -> w < 1))
        {
            throw new IllegalArgumentException("-n, -i and -w must be positive and --warmup not negative");
        }
        final List<LinkRate> rates = linkRates.stream().map(LinkRate::parse).toList();
        if (!rates.isEmpty() && worldSizes.stream().anyMatch(w -> w < 2 || w > HostNetwork.MAX_HOSTS))
        {
            throw new IllegalArgumentException("-w on an emulated cluster: 2.." + HostNetwork.MAX_HOSTS
                + " hosts, not " + worldSizes);
        }
        if ((leaves != 0 || uplinkRate != null) && rates.isEmpty())
        {
            throw new IllegalArgumentException("--leaves and --uplink-rate need --link-rate (an emulated fabric)");
        }
        if (leaves != 0 && (leaves < 2 || leaves > LeafSpineFabric.MAX_LEAVES
            || worldSizes.stream().anyMatch(w -> w < leaves || w > LeafSpineFabric.MAX_HOSTS)))
        {
            throw new IllegalArgumentException("--leaves " + leaves + ": 2.." + LeafSpineFabric.MAX_LEAVES
                + " leaves, each world size from the leaves' count to " + LeafSpineFabric.MAX_HOSTS + " hosts");
        }
        if (uplinkRate != null && leaves == 0)
        {
            throw new IllegalArgumentException("--uplink-rate needs --leaves");
        }
        final LinkRate uplink = uplinkRate == null ? null : LinkRate.parse(uplinkRate);
        if (profile != null)
        {
            jvmOptions.add(ProfileOptions.jvmOption(createProfileDir()));
        }
        final List<Peer> peers = peers(peerNames, python != null ? python
            : System.getenv().getOrDefault("INAGG_PYTHON", "python3"), jvmOptions, workerOptions,
            rates.isEmpty() ? InaggProcessPeer.STANDARD_MTU : mtu);
        final Path dir = workDir();
        if (!rates.isEmpty())
        {
            return profiled(out, onCluster(out, peers, rates, uplink, dir));
        }
        out.printf(Locale.ROOT, "bench-peers: %,d float32 x %d all-reduces (warmup %d) at %s ranks; logs in %s%n",
            elements, iterations, warmup, worldSizes, dir);
        out.flush();
        final List<PeerResult> results = new PeerBench(peers).run(worldSizes, elements, iterations, warmup, timeoutS,
            dir, r ->
            {
                out.printf(Locale.ROOT, "  %-30s %d ranks: %s%n", r.peer(), r.workers(), r.isMeasured()
                    ? String.format(Locale.ROOT, "%.3e elements/s", r.elementsPerSecond())
                    : r.status().name().toLowerCase(Locale.ROOT) + " (" + r.note() + ")");
                out.flush();
            });
        final PeerTable table = new PeerTable(results, "gloo", (long)elements * Float.BYTES);
        final String heading = String.format(Locale.ROOT, "%nelements/s per all-reduce (%,d float32, %d iterations),"
                + " ratio to gloo; %s, %d cores, %s", elements, iterations, Instant.now().truncatedTo(ChronoUnit.SECONDS),
            Runtime.getRuntime().availableProcessors(), System.getProperty("os.name") + " "
                + System.getProperty("os.version"));
        out.print(table.format(heading));
        out.flush();
        if (!"none".equals(chart))
        {
            final Path png = Path.of(chart);
            if (PeerChart.write(table, String.format(Locale.ROOT, "all-reduce of %,d float32", elements), png))
            {
                out.println("chart: " + png.toAbsolutePath());
            }
            final Path cpuPng = PeerChart.cpuFileBeside(png);
            if (PeerChart.writeCpu(table, String.format(Locale.ROOT, "CPU per all-reduce of %,d float32", elements),
                cpuPng))
            {
                out.println("chart: " + cpuPng.toAbsolutePath());
            }
            else
            {
                deleteStale(cpuPng);
            }
        }
        out.flush();
        return profiled(out, results.stream().anyMatch(r -> r.status() == PeerResult.Status.FAILED) ? 2 : 0);
    }

    /** A CPU chart left by an earlier run would read as this run's. */
    private static void deleteStale(final Path chart)
    {
        try
        {
            Files.deleteIfExists(chart);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot remove the stale chart " + chart + ": " + ex.getMessage(), ex);
        }
    }

    private Path createProfileDir()
    {
        try
        {
            final Path dir = Files.createDirectories(profile);
            try (var old = Files.list(dir))
            {
                if (old.anyMatch(f -> f.getFileName().toString().endsWith(ProfileOptions.COLLAPSED)))
                {
                    throw new IllegalArgumentException("--profile " + dir + " already holds profiles (*"
                        + ProfileOptions.COLLAPSED + "); give an empty or new folder");
                }
            }
            return dir;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("--profile " + profile + ": cannot create the folder: " + ex.getMessage(),
                ex);
        }
    }

    /** Writes the profiles' flame graphs and summary (with --profile), and passes the exit code on. */
    private int profiled(final PrintWriter out, final int exitCode)
    {
        if (profile != null)
        {
            out.println();
            out.print(ProfileReport.write(profile));
            out.println("flame graphs: " + profile.toAbsolutePath() + "/*.html");
            out.flush();
        }
        return exitCode;
    }

    private Path workDir()
    {
        try
        {
            return workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory("inagg-bench-peers");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create the work folder: " + ex.getMessage(), ex);
        }
    }

    /** The peers named, in the order named; inagg's UDP processes with packets for links of {@code mtu} bytes. */
    static List<Peer> peers(final List<String> names, final String python, final List<String> jvmOptions,
        final List<String> workerOptions, final int mtu)
    {
        final List<Peer> peers = new ArrayList<>();
        for (final String name : names)
        {
            peers.add(switch (name.strip())
            {
                case "gloo" -> new GlooPeer(python);
                case "mpi" -> new OpenMpiPeer(python);
                case "inagg-udp" -> InaggProcessPeer.forMtu(mtu, jvmOptions, workerOptions);
                case "inagg-udp-mtu" -> InaggProcessPeer.fillingMtu(mtu, jvmOptions, workerOptions);
                case "inagg-udp-p4" -> InaggProcessPeer.p4Packets(jvmOptions, workerOptions);
                case "inagg-udp-64k" -> new InaggProcessPeer(InaggProcessPeer.LOOPBACK_LANES,
                    InaggProcessPeer.LOOPBACK_SLOTS, jvmOptions, workerOptions);
                case "inagg-local" -> new InaggLocalPeer("inproc", jvmOptions);
                case "inagg-2level" -> new InaggTwoLevelPeer(jvmOptions, workerOptions);
                case "inagg-dpdk" -> new InaggLocalPeer("dpdk", jvmOptions);
                default -> throw new IllegalArgumentException("unknown peer '" + name + "'; use some of " + ALL_PEERS
                    + "," + EXTRA_PEERS + "," + FABRIC_PEERS);
            });
        }
        return peers;
    }

    /** bench-peers --link-rate: every peer on emulated clusters, beside its bound. */
    private int onCluster(final PrintWriter out, final List<Peer> peers, final List<LinkRate> rates,
        final LinkRate uplink, final Path dir) throws InterruptedException
    {
        out.printf(Locale.ROOT, "bench-peers on emulated %s: %,d float32 x %d all-reduces (warmup %d), %s hosts"
            + " (one rank each), %slinks %s, MTU %d; logs in %s%n", leaves == 0 ? "clusters" : "leaf-spine fabrics of "
            + leaves + " leaves", elements, iterations, warmup, worldSizes, leaves == 0 ? "" : "uplinks "
            + (uplink == null ? "as the host links" : uplink) + ", host ", rates, mtu, dir);
        out.flush();
        final List<ClusterBench.Row> rows = new ClusterBench(peers, mtu, queueMs, leaves, uplink).run(worldSizes,
            rates, elements,
            iterations, warmup, timeoutS, dir, row ->
            {
                final PeerResult r = row.result();
                out.printf(Locale.ROOT, "  %-28s %d hosts, %s: %s%n", r.peer(), r.workers(), row.rate(),
                    r.isMeasured() ? String.format(Locale.ROOT, "%.1f ms per all-reduce, %.2f of its bound %.1f ms",
                        row.seconds() * 1e3, row.ofBound(), row.boundSeconds() * 1e3)
                        : r.status().name().toLowerCase(Locale.ROOT) + " (" + r.note() + ")");
                out.flush();
            });
        final ClusterTable table = new ClusterTable(rows, "gloo");
        out.print(table.format(String.format(Locale.ROOT, "%nmean time per all-reduce of %,d float32 (%d timed), "
            + "the links' bound, ratio to gloo at the same hosts and rate; %s, %d cores", elements, iterations,
            Instant.now().truncatedTo(ChronoUnit.SECONDS), Runtime.getRuntime().availableProcessors())));
        if (!"none".equals(chart))
        {
            final Path png = Path.of(chart);
            table.writeChart(String.format(Locale.ROOT, "all-reduce of %,d float32 on emulated links (dashed: bound)",
                elements), png);
            out.println("chart: " + png.toAbsolutePath());
        }
        out.flush();
        return rows.stream().anyMatch(r -> r.result().status() == PeerResult.Status.FAILED) ? 2 : 0;
    }
}
