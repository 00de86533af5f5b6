package org.inagg.services.cli;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.agrona.concurrent.AgentRunner;
import org.inagg.agent.CounterKey;
import org.inagg.agent.IdleStrategies;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.UdpTransport;
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
        final SwitchJobConfig config = SwitchCommand.parseJob(job);
        if (workerAddresses.size() != config.workers())
        {
            throw new IllegalArgumentException("--workers-at lists " + workerAddresses.size() + " addresses for the "
                + config.workers() + " workers of --job " + job);
        }
        final List<InetSocketAddress> workers = workerAddresses.stream()
            .map(text -> Addresses.parse("--workers-at", text)).toList();
        final List<InetSocketAddress> known = new java.util.ArrayList<>(workers);
        if (resultsVia != null)
        {
            known.add(Addresses.parse("--results-via", resultsVia)); // peer W: the switch
        }
        final UdpTransport udp = UdpTransport.open(Addresses.parse("--bind", bind), known,
            Math.max(service.maxPeers, workers.size() + 2),
            EsaWire.partialLength(config.lanesPerPacket(), config.workers()),
            64);
        final int[] peers = new int[config.workers()];
        for (int w = 0; w < peers.length; w++)
        {
            peers[w] = w;
        }
        final ParameterServer server = new ParameterServer(
            FaultInjectingTransport.wrap(capture.wrap(udp, FrameHeaders.udp(udp)), service.loss > 0 ? FaultConfig.lossy(service.loss, 2) : FaultConfig.NONE),
            countersOptions.open("ps", "ps udp://" + udp.localAddress().getHostString() + ":"
                + udp.localAddress().getPort() + " job " + job, 64, out, udp, CounterKey.NONE, CounterKey.NONE), 256,
            2 * config.slots());
        server.addJob(new ServerJobConfig(config.jobId(), config.workers(), peers,
            resultsVia == null ? 0 : workers.size(), resultsVia != null, config.slots(),
            config.lanesPerPacket()));
        final AgentRunner runner = new AgentRunner(IdleStrategies.byName(service.idle, udp), Throwable::printStackTrace,
            null, server);
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            runner.close();
            stopped.countDown();
        }));
        AgentRunner.startOnThread(runner);
        out.printf("inagg ps listening on udp://%s, job %d: %d workers, %d slots, %d lanes%n", udp.localAddress(),
            config.jobId(), config.workers(), config.slots(), config.lanesPerPacket());
        out.flush();

        service.runUntilStopped(stopped, () -> report(out, server));
        runner.close();
        countersOptions.close();
        report(out, server);
        capture.report(out);
        return 0;
    }

    private static void report(final PrintWriter out, final ParameterServer server)
    {
        out.printf("ps: received %,d, partials merged %,d, raw merged %,d, blocks completed %,d, results %,d,"
                + " retransmissions answered %,d, joins %,d%n", server.counter(ServerCounter.RECEIVED),
            server.counter(ServerCounter.PARTIALS_MERGED), server.counter(ServerCounter.RAW_MERGED),
            server.counter(ServerCounter.COMPLETED), server.counter(ServerCounter.RESULTS_SENT),
            server.counter(ServerCounter.RETRANSMIT_REPLIES), server.counter(ServerCounter.JOINS));
        out.flush();
    }
}
