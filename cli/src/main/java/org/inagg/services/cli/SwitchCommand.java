package org.inagg.services.cli;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;

import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.http.ApiToken;
import org.inagg.services.softswitch.SwitchContext;
import org.inagg.services.softswitch.SwitchNode;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.InterfaceMtu;
import org.inagg.transport.Transport;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.wire.InaggHeader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code inagg switch}: a software switch on a UDP port, serving the jobs given on the command line. */
@Command(
    name = "switch",
    mixinStandardHelpOptions = true,
    description = "Run a software switch on a UDP port or DPDK ports until stopped (Ctrl-C) or --duration elapses.")
public final class SwitchCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--bind", defaultValue = "0.0.0.0:9000", description = "UDP address to listen on (default ${DEFAULT-VALUE}).")
    private String bind;

    @Option(names = "--job", split = ",",
        description = "A job as ID:WORKERS[:SLOTS[:LANES]], e.g. 1:4 or 1:4:128:256; repeatable. Without LANES a "
            + "packet fills the MTU of the interface --bind is on, up to 363 lanes (1500 bytes; over DPDK and with "
            + "--upstream 256, the P4 programs' and the parameter server's), and SLOTS default to as many as keep "
            + "128 x 256 lanes in flight (90 of 363). Each needs its workers' sources (--source) unless --open. "
            + "Jobs from the controller come through --control instead.")
    private List<String> jobs = new java.util.ArrayList<>();

    @Option(names = "--source", split = ",", paramLabel = "JOB:WORKER=HOST:PORT",
        description = "Register the UDP source of a worker of a --job (the worker binds it with --bind HOST:PORT, or "
            + "over DPDK sends from --local-ip and --udp-port), e.g. 1:0=10.0.0.1:9101; repeatable. The switch then "
            + "takes that worker's JOINs and packets only from there (admission; docs/sessions.md); over DPDK also "
            + "only from the MAC its first accepted JOIN came from (docs/security.md).")
    private List<String> sources = new java.util.ArrayList<>();

    @Option(names = "--open",
        description = "Lab mode: the --job jobs register no sources; each worker's source is learned from its JOIN, "
            + "and any sender that reaches this switch can join, restart or feed them (a warning says so at start).")
    private boolean open;

    @Option(names = "--control", paramLabel = "HOST:PORT",
        description = "Listen for the controller on this HTTP address (e.g. 127.0.0.1:7071; docs/controller.md): jobs "
            + "added and removed at run time with their registered sources and JOIN credentials (over DPDK too: "
            + "each source's MAC is pinned by its first accepted JOIN).")
    private String control;

    @Option(names = "--token-file", paramLabel = "FILE",
        description = "With --control: a shared secret (one line) the controller must present as 'Authorization: "
            + "Bearer TOKEN' (default: $INAGG_TOKEN if set, else none, with a warning).")
    private java.nio.file.Path tokenFile;

    @Option(names = "--upstream",
        description = "Two-level aggregation (UDP): sum only --local-workers of each job and send the sums to the "
            + "parameter server (`inagg ps`) at this host:port instead of multicasting them.")
    private String upstream;

    @Option(names = "--local-workers", split = ",",
        description = "With --upstream: the worker ids this switch serves, e.g. 0,1,2; others are refused.")
    private int[] localWorkers;

    @Option(names = "--results-down", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "With --upstream: the parameter server sends each round's result once to this switch, which "
            + "multicasts it to its local workers; --no-results-down: the server answers every worker itself "
            + "(default ${DEFAULT-VALUE}).")
    private boolean resultsDown;

    @Option(names = "--shards", defaultValue = "1",
        description = "Aggregate on this many threads, each with its own socket on the --bind port (SO_REUSEPORT) and "
            + "its own jobs: the kernel hands each job's datagrams to shard (job id %% shards), so no state is shared "
            + "(UDP; --job jobs or the controller's through --control; not with --upstream; with --pcap one file a "
            + "shard) (default ${DEFAULT-VALUE}).")
    private int shards;

    @Mixin
    private ServiceOptions service;

    @Option(names = "--transport", defaultValue = "udp",
        description = "udp (a socket on --bind) or dpdk (--eal-args, --vdev, --port, --local-mac, --local-ip, "
            + "--peer; --source and --control as over UDP; see docs/running-on-dpdk.md) (default ${DEFAULT-VALUE}).")
    private String transportName;

    @Mixin
    private DpdkOptions dpdkOptions;

    @Mixin
    private CaptureOptions capture;

    @Mixin
    private CountersOptions countersOptions;

    /** With --transport dpdk: EAL, pool and transport, opened by the switch's launch once its context is checked. */
    private DpdkNode dpdkNode;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        service.validate();
        final boolean dpdk = DpdkOptions.isDpdk(transportName);
        final DefaultLanes lanes = defaultLanes(dpdk);
        final List<SwitchJobConfig> parsed = jobs.stream().map(text -> parseJob(text, lanes.lanes())).toList();
        // Checked (conclude) before DPDK starts: EAL takes ports and hugepages that an error after it would leave held.
        final SwitchContext context = new SwitchContext().jobs(parsed).sources(parseSources(sources, parsed))
            .open(open).localWorkers(localWorkers).resultsDown(resultsDown)
            .upstream(upstream == null ? null : Addresses.parse("--upstream", upstream))
            .control(control == null ? null : Addresses.parse("--control", control))
            .maxPeers(service.maxPeers).idle(service.idle).shards(shards).defaultLanes(lanes.lanes())
            .decorator((shard, transport, headers) -> withLoss(capture.wrap(shard, shards, transport, headers),
                service.loss > 0 ? FaultConfig.lossy(service.loss, 1 + shard) : FaultConfig.NONE));
        context.counters(where -> countersOptions.open("switch", "switch " + where + " jobs " + String.join(",", jobs)
            + (upstream == null ? "" : " up to " + upstream), context.countersCapacity(), out), countersOptions::close);
        if (dpdk)
        {
            context.transportOpener((maxMessage, maxPeers, maxLearnedPeers) ->
            {
                // maxMessage is a packet of the widest job: --upstream, with its longer PARTIALs, is refused here.
                dpdkNode = DpdkNode.open(dpdkOptions, "switch", maxMessage, maxPeers, maxLearnedPeers, out);
                return new SwitchContext.OpenedTransport(dpdkNode.transport(), dpdkNode.transport(),
                    FrameHeaders.inPlace(), "dpdk " + dpdkOptions.ports);
            });
        }
        else
        {
            context.bind(Addresses.parse("--bind", bind));
        }
        if (control != null)
        {
            context.token(ApiToken.fromFileOrEnvironment(tokenFile, System.getenv()));
        }
        context.conclude();
        final SwitchNode node;
        try
        {
            node = SwitchNode.launch(context);
        }
        catch (final RuntimeException ex)
        {
            closeDpdk();
            throw ex;
        }
        final ProfileWindow profile = ProfileWindow.forRole("switch", System.err);
        final boolean markCpu = System.getProperty(ProfileWindow.AFTER_CONTRIBUTIONS) != null;
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            final String cpu = markCpu ? ProcessCpu.switchExitLine(ProcessCpu.nanos()) : null;
            if (cpu != null)
            {
                out.println(cpu); // bench-peers: the switch's CPU over the timed all-reduces ends here
                out.flush();
            }
            profile.stopAndWrite();
            node.close();
            closeDpdk();
        }));
        if (node.controlAddress() != null)
        {
            out.printf("  control: http://%s:%d (controller: bin/inagg controller --switch-control this)%n",
                node.controlAddress().getHostString(), node.controlAddress().getPort());
            if (tokenFile == null && System.getenv(ApiToken.ENV) == null)
            {
                out.printf("  warning: no token on the control port (--token-file or %s): anyone who reaches it can"
                    + " install and remove jobs%n", ApiToken.ENV);
            }
        }
        if (profile.enabled() || markCpu)
        {
            markWarmupEnd(profile, node, markCpu ? out : null);
        }
        out.printf("inagg switch listening on %s, jobs: %s%s%n",
            node.where(), node.jobs(),
            upstream == null ? "" : ", summing workers " + java.util.Arrays.toString(localWorkers) + " up to the"
                + " parameter server at " + upstream);
        if (jobs.stream().anyMatch(text -> text.split(":", -1).length < 4))
        {
            out.printf("  lanes: %d a packet where --job names none (%s)%n", lanes.lanes(), lanes.why());
        }
        final List<Integer> openJobs = node.jobs().stream().filter(c -> !c.registeredSources())
            .map(SwitchJobConfig::jobId).toList();
        if (!openJobs.isEmpty())
        {
            // --open: labs only (docs/sessions.md, "Admission").
            out.printf("  warning: open mode (--open): job(s) %s have no registered sources; any sender that reaches"
                + " this switch can join, restart or feed them (register sources with --source or through"
                + " bin/inagg controller for admission)%n", openJobs);
        }
        node.transportNotes().forEach(note -> out.println("  " + note));
        out.flush();

        service.runUntilStopped(node::awaitClose, () ->
        {
            out.println(node.describeCounters());
            out.flush();
        });
        node.close();
        capture.report(out);
        if (dpdkNode != null)
        {
            closeDpdk();
            return dpdkNode.leaked() ? 3 : 0;
        }
        return 0;
    }

    private void closeDpdk()
    {
        if (dpdkNode != null)
        {
            dpdkNode.close(); // after the switch's agent closed the transport
        }
    }

    /**
     * --source values by job id: the source of each worker id, indexed by worker (null where not given).
     *
     * @throws IllegalArgumentException naming the value that is malformed, names a job that is not a --job, a worker
     *                                  out of the job's range, or a worker given twice.
     */
    static Map<Integer, InetSocketAddress[]> parseSources(final List<String> values, final List<SwitchJobConfig> jobs)
    {
        final Map<Integer, InetSocketAddress[]> byJob = new TreeMap<>();
        for (final String value : values)
        {
            final int equals = value.indexOf('=');
            final String[] key = equals < 0 ? new String[0] : value.substring(0, equals).split(":", -1);
            if (key.length != 2)
            {
                throw new IllegalArgumentException("--source wants JOB:WORKER=HOST:PORT, got '" + value + "'");
            }
            final int jobId;
            final int worker;
            try
            {
                jobId = Integer.parseInt(key[0]);
                worker = Integer.parseInt(key[1]);
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--source '" + value + "': " + ex.getMessage());
            }
            final SwitchJobConfig job = jobs.stream().filter(j -> j.jobId() == jobId).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("--source '" + value + "' names job " + jobId
                    + ", which no --job gives"));
            if (worker < 0 || worker >= job.workers())
            {
                throw new IllegalArgumentException("--source '" + value + "': job " + jobId + " has workers 0.."
                    + (job.workers() - 1));
            }
            final InetSocketAddress address = Addresses.parse("--source", value.substring(equals + 1));
            final InetSocketAddress[] row = byJob.computeIfAbsent(jobId, id -> new InetSocketAddress[job.workers()]);
            if (row[worker] != null)
            {
                throw new IllegalArgumentException("--source gives worker " + worker + " of job " + jobId + " twice ("
                    + row[worker] + " and " + address + ")");
            }
            row[worker] = address;
        }
        return byJob;
    }

    /** {@code captured} behind the loss injector; closed (its capture file too) if the injector cannot be made. */
    private static Transport withLoss(final Transport captured, final FaultConfig faults)
    {
        try
        {
            return FaultInjectingTransport.wrap(captured, faults);
        }
        catch (final RuntimeException | Error ex)
        {
            try
            {
                captured.close();
            }
            catch (final RuntimeException closing)
            {
                ex.addSuppressed(closing);
            }
            throw ex;
        }
    }

    /** The lanes of a --job that names none, and why. */
    record DefaultLanes(int lanes, String why)
    {
    }

    private DefaultLanes defaultLanes(final boolean dpdk)
    {
        if (upstream != null)
        {
            return new DefaultLanes(SwitchJobConfig.DEFAULT_LANES, "with --upstream: the parameter server's default");
        }
        if (dpdk)
        {
            // Kept at the P4 programs' packets until measured on NIC ports: over memif rings on 2 cores 363 lanes were
            // no faster than 256, both retransmitting 1-6 % (docs/performance.md, "Over DPDK the default stays").
            return new DefaultLanes(SwitchJobConfig.DEFAULT_LANES, "over DPDK: the P4 programs' packets");
        }
        final InterfaceMtu mtu = InterfaceMtu.of(Addresses.parse("--bind", bind).getAddress());
        if (mtu.bytes() < InaggHeader.HEADERS_IN_MTU + Integer.BYTES)
        {
            return new DefaultLanes(SwitchJobConfig.DEFAULT_LANES, "the " + mtu.bytes() + "-byte MTU of " + mtu.where()
                + " holds no lane; the P4 programs' default");
        }
        final int lanes = SwitchJobConfig.lanesFillingMtu(mtu.bytes());
        return new DefaultLanes(lanes, lanes == SwitchJobConfig.MTU_FILLING_MAX_LANES
            ? "packets that fill a 1500-byte MTU; " + mtu.where() + "'s is " + mtu.bytes()
            : "packets that fill the " + mtu.bytes() + "-byte MTU of " + mtu.where());
    }

    /** A --job value; {@code defaultLanes} where it names no lanes (then slots keep the default's lanes in flight). */
    static SwitchJobConfig parseJob(final String text, final int defaultLanes)
    {
        // Limit -1 keeps trailing empty parts: "1:4:" is refused rather than read as "1:4" (fuzzing finding).
        final String[] parts = text.split(":", -1);
        if (parts.length < 2 || parts.length > 4)
        {
            throw new IllegalArgumentException("--job wants ID:WORKERS[:SLOTS[:LANES]], got '" + text + "'");
        }
        try
        {
            final int id = Integer.parseInt(parts[0]);
            final int workers = Integer.parseInt(parts[1]);
            final int lanes = parts.length > 3 ? Integer.parseInt(parts[3]) : defaultLanes;
            final int slots = parts.length > 2 ? Integer.parseInt(parts[2])
                : SwitchJobConfig.slotsKeepingLanesInFlight(lanes);
            return new SwitchJobConfig(id, workers, slots, lanes);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--job '" + text + "': " + ex.getMessage());
        }
    }

    /**
     * bench-peers: a watcher thread waits until the switch has aggregated the workers' warm-up ({@value
     * ProfileWindow#AFTER_CONTRIBUTIONS} contributions), then prints the process's CPU time so far ({@link
     * ProcessCpu#switchMarkLine}: the benchmark subtracts it from the time the switch prints at exit) and starts the
     * profile (with --profile), so both show the switch's steady state, not its JIT. It looks every 5 ms, and every
     * 100 µs near the end (the last tenth, or two of its steps away): the mark lags the warm-up's end by about that and
     * a thread's wake-up, CPU left out of the switch's figure.
     *
     * @param out where the CPU line goes; null for none (a profile without bench-peers' warm-up count).
     */
    private static void markWarmupEnd(final ProfileWindow profile, final SwitchNode node, final PrintWriter out)
    {
        final long after = Long.getLong(ProfileWindow.AFTER_CONTRIBUTIONS, 0);
        final Thread watcher = new Thread(() ->
        {
            long seen = node.counter(SwitchCounter.CONTRIBUTIONS);
            long step = 0;
            boolean near = false;
            while (seen < after)
            {
                // Every 5 ms, then every 100 µs from the last tenth or two 5 ms steps before the end, to the end.
                near |= after - seen <= after / 10 || after - seen <= 2 * step;
                LockSupport.parkNanos(near ? 100_000 : 5_000_000);
                final long now = node.counter(SwitchCounter.CONTRIBUTIONS);
                step = now - seen;
                seen = now;
            }
            final String mark = out == null ? null : ProcessCpu.switchMarkLine(ProcessCpu.nanos());
            if (mark != null)
            {
                out.println(mark);
                out.flush();
            }
            profile.start();
        }, "warm-up-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }
}
