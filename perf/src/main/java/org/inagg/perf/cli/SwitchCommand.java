package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.agrona.concurrent.AgentRunner;
import org.inagg.agent.CounterRegistry;
import org.inagg.agent.IdleStrategies;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.p4.softswitch.UpstreamAggregation;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
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
final class SwitchCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--bind", defaultValue = "0.0.0.0:9000", description = "UDP address to listen on (default ${DEFAULT-VALUE}).")
    private String bind;

    @Option(names = "--job", split = ",",
        description = "A job as ID:WORKERS[:SLOTS[:LANES]], e.g. 1:4 or 1:4:128:256; repeatable. Jobs from the "
            + "controller come through --control instead.")
    private List<String> jobs = new java.util.ArrayList<>();

    @Option(names = "--control", paramLabel = "HOST:PORT",
        description = "Listen for the controller on this HTTP address (e.g. 127.0.0.1:7071; docs/controller.md): jobs "
            + "added and removed at run time with their registered sources (UDP only).")
    private String control;

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
            + "--peer; see docs/running-on-dpdk.md) (default ${DEFAULT-VALUE}).")
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
        final List<SwitchJobConfig> configs = jobs.stream().map(SwitchCommand::parseJob).toList();
        if (configs.isEmpty() && control == null)
        {
            throw new IllegalArgumentException("give jobs with --job ID:WORKERS, or --control HOST:PORT for the"
                + " controller to add them");
        }
        final int maxLanes = Math.max(configs.stream().mapToInt(SwitchJobConfig::lanesPerPacket).max().orElse(256),
            control == null ? 0 : InaggHeader.MAX_ELEMENTS_FOR_1500_MTU);
        final boolean dpdk = DpdkOptions.isDpdk(transportName);
        if ((upstream == null) != (localWorkers == null))
        {
            throw new IllegalArgumentException("--upstream and --local-workers go together");
        }
        if (upstream != null && dpdk)
        {
            throw new IllegalArgumentException("--upstream runs over UDP; the DPDK transport has no parameter server"
                + " peer option yet");
        }
        final int maxWorkers = configs.stream().mapToInt(SwitchJobConfig::workers).max().orElse(1);
        final int maxMessage = upstream == null ? InaggHeader.messageLength(maxLanes)
            : EsaWire.partialLength(maxLanes, maxWorkers);
        final DpdkNode node = dpdk ? DpdkNode.open(dpdkOptions, "switch", InaggHeader.messageLength(maxLanes),
            service.maxPeers, out) : null;
        // With --upstream the parameter server is peer 0.
        final UdpTransport udp = dpdk ? null : UdpTransport.open(Addresses.parse("--bind", bind),
            upstream == null ? List.of() : List.of(Addresses.parse("--upstream", upstream)), service.maxPeers,
            maxMessage, 64);
        final Transport transport = dpdk ? node.transport() : udp;
        final CounterRegistry counters = countersOptions.open("switch", "switch "
            + (dpdk ? "dpdk " + dpdkOptions.ports : "udp://" + udp.localAddress().getHostString() + ":"
                + udp.localAddress().getPort()) + " jobs " + String.join(",", jobs)
            + (upstream == null ? "" : " up to " + upstream), 64, out);
        final SoftwareSwitch softwareSwitch = new SoftwareSwitch(
            FaultInjectingTransport.wrap(capture.wrap(transport, dpdk ? FrameHeaders.inPlace() : FrameHeaders.udp(udp)),
                service.loss > 0 ? FaultConfig.lossy(service.loss, 1) : FaultConfig.NONE),
            counters, 256);
        for (final SwitchJobConfig config : configs)
        {
            softwareSwitch.addJob(config, upstream == null ? null : new UpstreamAggregation(0, localWorkers));
        }
        if (control != null && udp == null)
        {
            throw new IllegalArgumentException("--control needs the UDP transport (sources are ip:port)");
        }
        final org.inagg.services.switchcontrol.SwitchControlServer controlServer = control == null ? null
            : org.inagg.services.switchcontrol.SwitchControlServer.launch(
                new org.inagg.services.switchcontrol.SwitchControlServer.Context().softwareSwitch(softwareSwitch)
                    .transport(udp).bind(Addresses.parse("--control", control)));
        if (controlServer != null)
        {
            out.printf("  control: http://%s:%d (controller: bin/inagg controller --switch-control this)%n",
                controlServer.address().getHostString(), controlServer.address().getPort());
        }
        final AgentRunner runner = new AgentRunner(IdleStrategies.byName(service.idle, transport), Throwable::printStackTrace,
            null,
            controlServer == null ? softwareSwitch : new org.agrona.concurrent.CompositeAgent(softwareSwitch,
                controlServer));
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            runner.close();
            if (node != null)
            {
                node.close();
            }
            stopped.countDown();
        }));
        AgentRunner.startOnThread(runner);
        out.printf("inagg switch listening on %s, jobs: %s%s%n",
            dpdk ? "dpdk " + dpdkOptions.ports : "udp://" + udp.localAddress(), configs,
            upstream == null ? "" : ", summing workers " + java.util.Arrays.toString(localWorkers) + " up to the"
                + " parameter server at " + upstream);
        if (!configs.isEmpty())
        {
            // Jobs from --job register no sources: labs only (docs/sessions.md, "Admission").
            out.printf("  warning: open mode: job(s) %s have no registered sources; any sender that reaches this switch"
                + " can join, restart or feed them (register sources through bin/inagg controller for admission)%n",
                configs.stream().map(c -> Integer.toString(c.jobId())).toList());
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
}
