package org.inagg.services.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.ps.ParameterServerContext;
import org.inagg.services.ps.ParameterServerNode;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.capture.FrameHeaders;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code inagg ps}: the parameter server at the top of two-level aggregation, on a UDP port. Switches started with
 * {@code inagg switch --upstream} send it the sums of their workers; workers started with {@code --switch} pointing
 * here send to it directly (it answers their JOINs). It sends every result to every worker, so it must know their
 * addresses: {@code --workers-at}, in worker id order (start the workers with a matching {@code --bind}).
 */
@Command(
    name = "ps",
    mixinStandardHelpOptions = true,
    description = {"Run the parameter server of two-level aggregation on a UDP port until stopped (Ctrl-C) or "
        + "--duration elapses: it adds the partial sums of `inagg switch --upstream` switches and the contributions "
        + "of workers sending to it directly, and sends every result to every worker."})
public final class PsCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--bind", defaultValue = "0.0.0.0:9100", description = "UDP address to listen on (default ${DEFAULT-VALUE}).")
    private String bind;

    @Option(names = "--job", required = true, description = "The job as ID:WORKERS[:SLOTS[:LANES]], as the switches have it.")
    private String job;

    @Option(names = "--workers-at", required = true, split = ",",
        description = "Every worker's UDP address host:port, in worker id order (where results go).")
    private List<String> workerAddresses;

    @Option(names = "--results-via", paramLabel = "HOST:PORT",
        description = "ATP: send every result to this switch (an `inagg esa-switch --mode atp`), which frees its "
            + "aggregator and multicasts it; default: straight to every worker (ESA, two-level).")
    private String resultsVia;

    @Mixin
    private ServiceOptions service;

    @Mixin
    private CaptureOptions capture;

    @Mixin
    private CountersOptions countersOptions;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        service.validate();
        final SwitchJobConfig config = SwitchCommand.parseJob(job, SwitchJobConfig.DEFAULT_LANES);
        final ParameterServerContext context = new ParameterServerContext()
            .bind(Addresses.parse("--bind", bind)).job(config)
            .workers(workerAddresses.stream().map(text -> Addresses.parse("--workers-at", text)).toList())
            .resultsVia(resultsVia == null ? null : Addresses.parse("--results-via", resultsVia))
            .maxPeers(service.maxPeers).idle(service.idle)
            .decorator(udp -> FaultInjectingTransport.wrap(capture.wrap(udp, FrameHeaders.udp(udp)),
                service.loss > 0 ? FaultConfig.lossy(service.loss, 2) : FaultConfig.NONE))
            .counters(label -> countersOptions.open("ps", label, 64 + TransportCounter.values().length, out),
                countersOptions::close)
            .conclude();
        final ParameterServerNode node = ParameterServerNode.launch(context);
        Runtime.getRuntime().addShutdownHook(new Thread(node::close));
        out.printf("inagg ps listening on udp://%s:%d, job %d: %d workers, %d slots, %d lanes%n",
            node.localAddress().getHostString(), node.localAddress().getPort(),
            config.jobId(), config.workers(), config.slots(), config.lanesPerPacket());
        out.flush();
        service.runUntilStopped(node::awaitClose, () -> report(out, node));
        node.close();
        report(out, node);
        capture.report(out);
        return 0;
    }

    private static void report(final PrintWriter out, final ParameterServerNode node)
    {
        out.println(node.describeCounters());
        out.flush();
    }
}
