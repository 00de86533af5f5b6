package org.inagg.services.cli;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.agrona.concurrent.AgentRunner;
import org.inagg.agent.CounterKey;
import org.inagg.agent.CounterRegistry;
import org.inagg.transport.IdleStrategies;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.p4.softswitch.UpstreamAggregation;
import org.inagg.services.http.ApiToken;
import org.inagg.services.switchcontrol.SwitchControlServer;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.SourceRegistry;
import org.inagg.transport.Transport;
import org.inagg.transport.UdpTransport;
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
        description = "A job as ID:WORKERS[:SLOTS[:LANES]], e.g. 1:4 or 1:4:128:256; repeatable. Each needs its "
            + "workers' sources (--source) unless --open. Jobs from the controller come through --control instead.")
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

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        service.validate();
        final List<SwitchJobConfig> parsed = jobs.stream().map(SwitchCommand::parseJob).toList();
        if (parsed.isEmpty() && control == null)
        {
            throw new IllegalArgumentException("give jobs with --job ID:WORKERS, or --control HOST:PORT for the"
                + " controller to add them");
        }
        final Map<Integer, InetSocketAddress[]> sourcesByJob = parseSources(sources, parsed);
        checkAdmission(parsed, sourcesByJob, open, upstream == null ? null : localWorkers);
        final int maxLanes = Math.max(parsed.stream().mapToInt(SwitchJobConfig::lanesPerPacket).max().orElse(256),
            control == null ? 0 : InaggHeader.MAX_ELEMENTS_FOR_1500_MTU);
        final boolean dpdk = DpdkOptions.isDpdk(transportName);
        // Before DPDK starts: EAL takes ports and hugepages that an error after it would leave held.
        final InetSocketAddress controlAddress = control == null ? null : Addresses.parse("--control", control);
        if ((upstream == null) != (localWorkers == null))
        {
            throw new IllegalArgumentException("--upstream and --local-workers go together");
        }
        if (upstream != null && dpdk)
        {
            throw new IllegalArgumentException("--upstream runs over UDP; the DPDK transport has no parameter server"
                + " peer option yet");
        }
        final int maxWorkers = parsed.stream().mapToInt(SwitchJobConfig::workers).max().orElse(1);
        final int maxMessage = upstream == null ? InaggHeader.messageLength(maxLanes)
            : EsaWire.partialLength(maxLanes, maxWorkers);
        // Under a controller, strangers' datagrams may take only half of the peer table: the rest stays free for the
        // sources the controller registers, whatever a flood from many source ports does.
        final int maxLearnedPeers = control == null ? service.maxPeers : Math.max(1, service.maxPeers / 2);
        final DpdkNode node = dpdk ? DpdkNode.open(dpdkOptions, "switch", InaggHeader.messageLength(maxLanes),
            service.maxPeers, maxLearnedPeers, out) : null;
        // With --upstream the parameter server is peer 0.
        final UdpTransport udp = dpdk ? null : UdpTransport.open(Addresses.parse("--bind", bind),
            upstream == null ? List.of() : List.of(Addresses.parse("--upstream", upstream)), service.maxPeers,
            maxLearnedPeers, maxMessage, 64);
        final Transport transport = dpdk ? node.transport() : udp;
        final SourceRegistry sourceRegistry = dpdk ? node.transport() : udp;
        final CounterRegistry counters = countersOptions.open("switch", "switch "
            + (dpdk ? "dpdk " + dpdkOptions.ports : "udp://" + udp.localAddress().getHostString() + ":"
                + udp.localAddress().getPort()) + " jobs " + String.join(",", jobs)
            + (upstream == null ? "" : " up to " + upstream), 64, out, transport, CounterKey.NONE, CounterKey.NONE);
        final List<SwitchJobConfig> configs = parsed.stream()
            .map(config -> withRegisteredSources(config, sourcesByJob.get(config.jobId()), sourceRegistry)).toList();
        final SoftwareSwitch softwareSwitch = new SoftwareSwitch(
            FaultInjectingTransport.wrap(capture.wrap(transport, dpdk ? FrameHeaders.inPlace() : FrameHeaders.udp(udp)),
                service.loss > 0 ? FaultConfig.lossy(service.loss, 1) : FaultConfig.NONE),
            counters, 256);
        for (final SwitchJobConfig config : configs)
        {
            softwareSwitch.addJob(config, upstream == null ? null : new UpstreamAggregation(0, localWorkers));
        }
        final SwitchControlServer controlServer = control == null ? null
            : SwitchControlServer.launch(
                new SwitchControlServer.Context().softwareSwitch(softwareSwitch)
                    .token(ApiToken.fromFileOrEnvironment(tokenFile, System.getenv()))
                    .transport(sourceRegistry).bind(controlAddress));
        if (controlServer != null)
        {
            out.printf("  control: http://%s:%d (controller: bin/inagg controller --switch-control this)%n",
                controlServer.address().getHostString(), controlServer.address().getPort());
            if (tokenFile == null && System.getenv(ApiToken.ENV) == null)
            {
                out.printf("  warning: no token on the control port (--token-file or %s): anyone who reaches it can"
                    + " install and remove jobs%n", ApiToken.ENV);
            }
        }
        final AgentRunner runner = new AgentRunner(IdleStrategies.byName(service.idle, transport), Throwable::printStackTrace,
            null,
            controlServer == null ? softwareSwitch : new org.agrona.concurrent.CompositeAgent(softwareSwitch,
                controlServer));
        final CountDownLatch stopped = new CountDownLatch(1);
        final ProfileWindow profile = ProfileWindow.forRole("switch", System.err);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            profile.stopAndWrite();
            runner.close();
            if (node != null)
            {
                node.close();
            }
            stopped.countDown();
        }));
        AgentRunner.startOnThread(runner);
        if (profile.enabled())
        {
            startProfileAfterWarmup(profile, softwareSwitch);
        }
        out.printf("inagg switch listening on %s, jobs: %s%s%n",
            dpdk ? "dpdk " + dpdkOptions.ports : "udp://" + udp.localAddress(), configs,
            upstream == null ? "" : ", summing workers " + java.util.Arrays.toString(localWorkers) + " up to the"
                + " parameter server at " + upstream);
        final List<Integer> openJobs = configs.stream().filter(c -> !c.registeredSources())
            .map(SwitchJobConfig::jobId).toList();
        if (!openJobs.isEmpty())
        {
            // --open: labs only (docs/sessions.md, "Admission").
            out.printf("  warning: open mode (--open): job(s) %s have no registered sources; any sender that reaches"
                + " this switch can join, restart or feed them (register sources with --source or through"
                + " bin/inagg controller for admission)%n", openJobs);
        }
        if (udp != null)
        {
            out.println("  " + udp.describeIo());
            out.println("  " + udp.describeBuffers());
            for (final SwitchJobConfig config : configs)
            {
                // Every worker may have a whole window in flight at once; beyond the receive buffer the kernel drops.
                final long window = (long)config.workers() * config.slots() * InaggHeader.messageLength(
                    config.lanesPerPacket());
                if (window > udp.receiveBufferBytes() / 2)
                {
                    out.printf("  warning: job %d can have %,d bytes in flight (%d workers x %d slots x %d-byte "
                            + "packets), more than half the %,d-byte receive buffer: expect drops and retransmissions;"
                            + " fewer slots, or raise net.core.rmem_max%n", config.jobId(), window, config.workers(),
                        config.slots(), InaggHeader.messageLength(config.lanesPerPacket()), udp.receiveBufferBytes());
                }
            }
        }
        out.flush();

        service.runUntilStopped(stopped, () ->
        {
            out.printf("switch: received %,d, contributions %,d, results %,d, retransmit replies %,d, partials up %,d,"
                    + " forwarded up %,d, dropped %,d%n",
                softwareSwitch.counter(SwitchCounter.RECEIVED), softwareSwitch.counter(SwitchCounter.CONTRIBUTIONS),
                softwareSwitch.counter(SwitchCounter.RESULTS_SENT),
                softwareSwitch.counter(SwitchCounter.RETRANSMIT_REPLIES),
                softwareSwitch.counter(SwitchCounter.UPSTREAM_PARTIALS),
                softwareSwitch.counter(SwitchCounter.UPSTREAM_FORWARDS), dropped(softwareSwitch));
            out.flush();
        });
        runner.close();
        if (controlServer != null)
        {
            controlServer.close();
        }
        countersOptions.close();
        capture.report(out);
        if (node != null)
        {
            node.close();
            return node.leaked() ? 3 : 0;
        }
        return 0;
    }

    private static long dropped(final SoftwareSwitch softwareSwitch)
    {
        long total = 0;
        for (final SwitchCounter counter : SwitchCounter.values())
        {
            if (counter.name().startsWith("DROP_"))
            {
                total += softwareSwitch.counter(counter);
            }
        }
        return total;
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

    /**
     * Admission by default: every --job has all its workers' sources (with --upstream: those of its local workers, the
     * only ones this switch serves), or --open says the switch is a lab's.
     *
     * @param localWorkers with --upstream, the worker ids this switch serves; null for a one-level switch.
     * @throws IllegalArgumentException naming the job and the workers whose sources are missing, and what to do.
     */
    static void checkAdmission(
        final List<SwitchJobConfig> jobs, final Map<Integer, InetSocketAddress[]> sourcesByJob, final boolean open,
        final int[] localWorkers)
    {
        for (final SwitchJobConfig job : jobs)
        {
            final InetSocketAddress[] row = sourcesByJob.get(job.jobId());
            final List<Integer> missing = new ArrayList<>();
            final List<Integer> foreign = new ArrayList<>();
            for (int w = 0; w < job.workers(); w++)
            {
                final boolean served = localWorkers == null || contains(localWorkers, w);
                if (served && (row == null || row[w] == null))
                {
                    missing.add(w);
                }
                if (!served && row != null && row[w] != null)
                {
                    foreign.add(w);
                }
            }
            if (!foreign.isEmpty())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": --source gives worker(s) " + foreign
                    + ", which this switch does not serve (--local-workers " + java.util.Arrays.toString(localWorkers)
                    + "): register them where they send (another switch, or the parameter server)");
            }
            if (row != null && !missing.isEmpty())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": --source gives some workers' sources but"
                    + " not those of worker(s) " + missing + "; give all of them, or none with --open");
            }
            if (row == null && !open)
            {
                throw new IllegalArgumentException("job " + job.jobId() + " has no registered sources, so any sender"
                    + " could join, restart or feed it: give each worker's source with --source " + job.jobId()
                    + ":WORKER=HOST:PORT (workers bind it with --bind), let bin/inagg controller register them"
                    + " (--control), or run a lab switch with --open");
            }
        }
    }

    private static boolean contains(final int[] workers, final int worker)
    {
        for (final int w : workers)
        {
            if (w == worker)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Placeholder source of a worker this switch does not serve (--upstream): its packets are refused as another
     * switch's worker before any source is compared, and no transport numbers a peer this high.
     */
    static final int NOT_SERVED_PEER = Integer.MAX_VALUE;

    private static SwitchJobConfig withRegisteredSources(
        final SwitchJobConfig config, final InetSocketAddress[] sources, final SourceRegistry registry)
    {
        if (sources == null)
        {
            return config;
        }
        final int[] peers = new int[sources.length];
        for (int w = 0; w < sources.length; w++)
        {
            if (sources[w] == null)
            {
                peers[w] = NOT_SERVED_PEER; // checkAdmission: only a worker this --upstream switch does not serve
                continue;
            }
            peers[w] = registry.addPeer(sources[w]);
            if (peers[w] < 0)
            {
                throw new IllegalArgumentException("job " + config.jobId() + ": the switch's peer table is full at "
                    + "worker " + w + "'s source " + sources[w] + "; raise --max-peers");
            }
        }
        return new SwitchJobConfig(config.jobId(), config.workers(), config.slots(), config.lanesPerPacket(),
            SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP, peers, config.session());
    }

    static SwitchJobConfig parseJob(final String text)
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
            final int slots = parts.length > 2 ? Integer.parseInt(parts[2]) : SwitchJobConfig.DEFAULT_SLOTS;
            final int lanes = parts.length > 3 ? Integer.parseInt(parts[3]) : SwitchJobConfig.DEFAULT_LANES;
            return new SwitchJobConfig(id, workers, slots, lanes);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--job '" + text + "': " + ex.getMessage());
        }
    }

    /**
     * bench-peers --profile: a watcher thread starts the switch's profile once it has aggregated the workers' warm-up
     * ({@value ProfileWindow#AFTER_CONTRIBUTIONS} contributions), so the profile shows its steady state, not its JIT.
     */
    private static void startProfileAfterWarmup(final ProfileWindow profile, final SoftwareSwitch softwareSwitch)
    {
        final long after = Long.getLong(ProfileWindow.AFTER_CONTRIBUTIONS, 0);
        final Thread watcher = new Thread(() ->
        {
            while (softwareSwitch.counter(SwitchCounter.CONTRIBUTIONS) < after)
            {
                java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
            }
            profile.start();
        }, "profile-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }
}
