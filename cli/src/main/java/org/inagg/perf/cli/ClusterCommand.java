package org.inagg.perf.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.perf.lab.EmulatedCluster;
import org.inagg.perf.lab.EmulatedNetwork;
import org.inagg.perf.lab.HostNetwork;
import org.inagg.perf.lab.InaggProcess;
import org.inagg.perf.lab.LeafSpineFabric;
import org.inagg.perf.lab.LinkRate;
import org.inagg.perf.lab.TopologyFabric;
import org.inagg.perf.peers.FabricPlacement;
import org.inagg.perf.peers.Placement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code inagg cluster}: an emulated cluster on this machine ({@link EmulatedCluster}): H hosts in network namespaces
 * on rate-limited links to a switch namespace, an {@code inagg switch} there (or only the bridge), and then either the
 * user's command on every host ({@code --run}) or a wait until Ctrl-C. Everything it made is removed when it ends,
 * however it ends (the command's end, a failure, Ctrl-C, SIGTERM).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
    description = "An emulated cluster: H hosts in network namespaces, each on a link limited to --link-rate both ways "
        + "(tc tbf) to a switch namespace with an inagg switch (or a plain bridge); runs --run on every host, or "
        + "waits until Ctrl-C; then removes everything it made. Needs root, iproute2 and ethtool. docs/cluster.md.")
public final class ClusterCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--hosts", defaultValue = "4", description = "Hosts, 2.." + HostNetwork.MAX_HOSTS
        + " (default ${DEFAULT-VALUE}).")
    private int hosts;

    @Option(names = "--link-rate", defaultValue = "1gbit", paramLabel = "RATE",
        description = "Every host's link rate, each way, as tc writes it: 100mbit, 1gbit, 2.5gbit "
            + "(default ${DEFAULT-VALUE}).")
    private String linkRate;

    @Option(names = "--host-rate", paramLabel = "HOST=RATE",
        description = "One host's link rate instead (repeatable), e.g. --host-rate 3=50mbit for a straggler.")
    private Map<Integer, String> hostRates = new LinkedHashMap<>();

    @Option(names = "--leaves", defaultValue = "0",
        description = "A leaf-spine fabric of this many leaves instead of one switch: hosts spread over the leaves in "
            + "blocks, the software switch at the spine (default ${DEFAULT-VALUE}: one switch).")
    private int leaves;

    @Option(names = "--uplink-rate", paramLabel = "RATE",
        description = "With --leaves: each leaf-to-spine link's rate (default: --link-rate).")
    private String uplinkRate;

    @Option(names = "--topology", paramLabel = "FILE",
        description = "A routed fabric from a topology file in the planners' format (control/README.md) instead: a "
            + "namespace per node, links at bandwidthGbps x --per-gbps, the switches routers; the hosts are its "
            + "workers, the software switch in the first programmable switch's aggregation unit (docs/cluster.md).")
    private Path topologyFile;

    @Option(names = "--per-gbps", defaultValue = "10mbit", paramLabel = "RATE",
        description = "With --topology: the emulated rate of one Gb/s of the file (default ${DEFAULT-VALUE}).")
    private String perGbps;

    @Option(names = "--mtu", defaultValue = "1500",
        description = "The links' MTU, 576..9000 (default ${DEFAULT-VALUE}).")
    private int mtu;

    @Option(names = "--queue-ms", defaultValue = "" + EmulatedCluster.QUEUE_MS_DEFAULT,
        description = "Milliseconds of traffic a link queues before it drops (default ${DEFAULT-VALUE}).")
    private int queueMs;

    @Option(names = "--switch", defaultValue = "software",
        description = "software: an inagg switch at 10.0.0.254:" + EmulatedCluster.SWITCH_UDP_PORT + " in the switch "
            + "namespace with one job over every host (worker n-1 at 10.0.0.n:9101); bridge: only the bridge, for "
            + "host-based peers (default ${DEFAULT-VALUE}). For bmv2 use `inagg lab`.")
    private String switchKind;

    @Option(names = "--job", defaultValue = "1",
        description = "The software switch's job id (default ${DEFAULT-VALUE}).")
    private int jobId;

    @Option(names = "--workers-per-host", defaultValue = "1",
        description = "Workers of the software switch's job on each host, 1..16: worker (n-1)*P + r at "
            + "10.0.0.n:(9101 + r); more than one puts every rank of a host straight on the switch instead of one "
            + "agent per host (PASSING's comparison) (default ${DEFAULT-VALUE}).")
    private int workersPerHost;

    @Option(names = "--slots", defaultValue = "0",
        description = "The software switch job's slots: each worker's window of packets in flight; 0 for the "
            + "switch's default (default ${DEFAULT-VALUE}).")
    private int slots;

    @Option(names = "--lanes", defaultValue = "0",
        description = "The software switch job's lanes per packet; 0 for the switch's default (packets that fill the "
            + "links' MTU, up to 363 lanes: 1,514-byte frames at 1500); without --slots, as many slots as keep "
            + "128 x 256 lanes in flight (default ${DEFAULT-VALUE}).")
    private int lanes;

    @Option(names = "--run", paramLabel = "COMMAND",
        description = "A shell command to run on every host at once (sh -c), with INAGG_CLUSTER_HOST (1..H), "
            + "INAGG_CLUSTER_RANK (0..H-1), INAGG_CLUSTER_HOSTS, INAGG_CLUSTER_IP, INAGG_CLUSTER_MASTER (host 1's "
            + "address), INAGG_CLUSTER_SWITCH (the switch's UDP address) and, with --leaves, INAGG_CLUSTER_LEAF and "
            + "INAGG_CLUSTER_LEAF_IP set; its lines are printed with [hN] "
            + "before them; the exit status is the worst host's.")
    private String run;

    @Option(names = "--timeout-s", defaultValue = "3600",
        description = "With --run: seconds after which the hosts' commands are killed (default ${DEFAULT-VALUE}).")
    private long timeoutS;

    @Option(names = "--work-dir", description = "Folder of the switch's log (default: a new temporary folder).")
    private Path workDir;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final LinkRate rate = LinkRate.parse(linkRate);
        final Map<Integer, LinkRate> perHost = new LinkedHashMap<>();
        hostRates.forEach((host, text) -> perHost.put(host, LinkRate.parse(text)));
        if (!"software".equals(switchKind) && !"bridge".equals(switchKind))
        {
            throw new IllegalArgumentException("--switch must be software or bridge, not '" + switchKind + "' (for "
                + "bmv2: inagg lab)");
        }
        if (workersPerHost < 1 || workersPerHost > 16)
        {
            throw new IllegalArgumentException("--workers-per-host must be 1..16, not " + workersPerHost);
        }
        if (slots < 0 || lanes < 0)
        {
            throw new IllegalArgumentException("--slots and --lanes must not be negative");
        }
        if (timeoutS < 1)
        {
            throw new IllegalArgumentException("--timeout-s must be positive, not " + timeoutS);
        }
        if (leaves == 0 && uplinkRate != null)
        {
            throw new IllegalArgumentException("--uplink-rate needs --leaves");
        }
        if (leaves != 0 && !perHost.isEmpty())
        {
            throw new IllegalArgumentException("--host-rate is for one switch, not with --leaves");
        }
        final LinkRate uplink = uplinkRate == null ? rate : LinkRate.parse(uplinkRate);
        final Path work = workFolder();
        if (topologyFile != null && (leaves != 0 || !perHost.isEmpty()))
        {
            throw new IllegalArgumentException("--topology gives the fabric: not with --leaves or --host-rate");
        }
        final EmulatedNetwork cluster = topologyFile != null ? TopologyFabric.create(TopologyFabric.read(topologyFile),
            LinkRate.parse(perGbps), mtu, queueMs, TopologyFabric.Shaping.BOTH, null)
            : leaves == 0 ? EmulatedCluster.create(hosts, rate, perHost, mtu, queueMs)
            : LeafSpineFabric.create(hosts, leaves, rate, uplink, mtu, queueMs);
        hosts = cluster.hosts();
        final Placement placement = cluster.placement();
        final Thread cleanup = new Thread(cluster::close, "inagg-cluster-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup); // Ctrl-C, SIGTERM
        try
        {
            out.printf(Locale.ROOT, "cluster: %s; the switch's place: %s%n", cluster.describe(),
                String.join(" ", placement.switchExec()));
            final String switchAt = placement.switchAddress() + ":" + EmulatedCluster.SWITCH_UDP_PORT;
            InaggProcess softwareSwitch = null;
            if ("software".equals(switchKind))
            {
                softwareSwitch = startSwitch(placement, work.resolve("switch.log"));
                out.printf(Locale.ROOT, "switch: inagg switch at %s, job %d of %d workers, worker (n-1)*%d+r from "
                    + "10.0.0.n:(9101+r) (log %s)%n", switchAt, jobId, hosts * workersPerHost, workersPerHost,
                    work.resolve("switch.log"));
            }
            for (int rank = 0; rank < hosts; rank++)
            {
                out.printf(Locale.ROOT, "host %d: %s, link %s; %s COMMAND%n", rank + 1, placement.rankAddress(rank),
                    cluster.linkOf(rank + 1), String.join(" ", placement.rankExec(rank)));
                if (softwareSwitch != null)
                {
                    out.printf(Locale.ROOT, "  inagg worker --switch %s --bind %s:9101 --job-id %d --worker-id %d "
                        + "-w %d -n 1048576%n", switchAt, placement.rankAddress(rank), jobId, rank * workersPerHost,
                        hosts * workersPerHost);
                }
            }
            out.flush();
            if (run != null)
            {
                return runOnEveryHost(placement, switchAt, out);
            }
            out.println("cluster ready (Ctrl-C to stop)");
            out.flush();
            while (softwareSwitch == null || softwareSwitch.process().isAlive())
            {
                Thread.sleep(500);
            }
            out.println("cluster: the switch exited:\n" + softwareSwitch.output());
            return 1;
        }
        finally
        {
            cluster.close();
            try
            {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            }
            catch (final IllegalStateException shuttingDown)
            {
                // the hook is running or ran: the cluster is gone either way
            }
            out.println("cluster: removed (" + cluster.remainingNamespaces().size()
                + " namespaces left)");
            out.flush();
        }
    }

    private InaggProcess startSwitch(final Placement placement, final Path log) throws InterruptedException
    {
        final StringBuilder sources = new StringBuilder();
        for (int rank = 0; rank < hosts; rank++)
        {
            for (int r = 0; r < workersPerHost; r++)
            {
                sources.append(sources.isEmpty() ? "" : ",").append(jobId).append(':')
                    .append(rank * workersPerHost + r).append('=').append(placement.rankAddress(rank)).append(':')
                    .append(9101 + r);
            }
        }
        final InaggProcess process = InaggProcess.start(placement.switchExec(), log, List.of("switch",
            "--bind", placement.switchAddress() + ":" + EmulatedCluster.SWITCH_UDP_PORT, "--job",
            jobId + ":" + hosts * workersPerHost + (slots > 0 || lanes > 0 ? ":"
                + (slots > 0 ? slots : SwitchJobConfig.slotsKeepingLanesInFlight(lanes)) : "")
                + (lanes > 0 ? ":" + lanes : ""),
            "--source", sources.toString(), "--stats-interval", "0"));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!process.output().contains("installed") && process.process().isAlive()
            && System.nanoTime() - deadline < 0)
        {
            Thread.sleep(50);
        }
        if (!process.process().isAlive() || !process.output().contains("installed"))
        {
            process.kill();
            throw new IllegalStateException("the switch did not start within 30 s:\n" + process.output());
        }
        return process;
    }

    private int runOnEveryHost(final Placement placement, final String switchAt, final PrintWriter out)
        throws InterruptedException
    {
        final List<Process> processes = new ArrayList<>();
        final List<Thread> pumps = new ArrayList<>();
        for (int rank = 0; rank < hosts; rank++)
        {
            final List<String> command = new ArrayList<>(placement.rankExec(rank));
            command.addAll(List.of("sh", "-c", run));
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            final Map<String, String> env = builder.environment();
            env.put("INAGG_CLUSTER_HOST", Integer.toString(rank + 1));
            env.put("INAGG_CLUSTER_RANK", Integer.toString(rank));
            env.put("INAGG_CLUSTER_HOSTS", Integer.toString(hosts));
            env.put("INAGG_CLUSTER_IP", placement.rankAddress(rank));
            env.put("INAGG_CLUSTER_MASTER", placement.rankAddress(0));
            env.put("INAGG_CLUSTER_SWITCH", switchAt);
            env.put("INAGG_CLUSTER_WORKERS_PER_HOST", Integer.toString(workersPerHost));
            if (placement instanceof FabricPlacement fabric)
            {
                env.put("INAGG_CLUSTER_LEAF", Integer.toString(fabric.leafOf(rank)));
                env.put("INAGG_CLUSTER_LEAF_IP", fabric.leafAddress(fabric.leafOf(rank)));
            }
            final Process process;
            try
            {
                process = builder.start();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot run on host " + (rank + 1) + ": " + ex.getMessage(), ex);
            }
            processes.add(process);
            final String tag = "[h" + (rank + 1) + "] ";
            final Thread pump = Thread.ofVirtual().start(() -> copyLines(process, tag, out));
            pumps.add(pump);
        }
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
        int worst = 0;
        for (int i = 0; i < processes.size(); i++)
        {
            final Process process = processes.get(i);
            final long left = deadline - System.nanoTime();
            if (left <= 0 || !process.waitFor(left, TimeUnit.NANOSECONDS))
            {
                out.printf(Locale.ROOT, "cluster: host %d still ran after --timeout-s %d: killed%n", i + 1, timeoutS);
                processes.forEach(Process::destroyForcibly);
                worst = Math.max(worst, 124);
                break;
            }
            worst = Math.max(worst, process.exitValue());
        }
        for (final Thread pump : pumps)
        {
            pump.join(TimeUnit.SECONDS.toMillis(5));
        }
        out.printf(Locale.ROOT, "cluster: --run ended with status %d%n", worst);
        out.flush();
        return worst;
    }

    private static void copyLines(final Process process, final String tag, final PrintWriter out)
    {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = reader.readLine()) != null)
            {
                synchronized (out)
                {
                    out.println(tag + line);
                    out.flush();
                }
            }
        }
        catch (final IOException ex)
        {
            // the process is gone; its remaining output with it
        }
    }

    private Path workFolder()
    {
        try
        {
            return workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory("inagg-cluster-");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("creating the work folder", ex);
        }
    }
}
