package org.inagg.services.cli;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaJobConfig;
import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.esaswitch.EsaSwitchContext;
import org.inagg.services.esaswitch.EsaSwitchContext.JobSpec;
import org.inagg.services.esaswitch.EsaSwitchNode;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.capture.FrameHeaders;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code inagg esa-switch}: the shared-pool switch ({@link EsaSwitch}, docs/esa.md) on a UDP port. Every job shares
 * one pool of aggregators; each has a parameter server ({@code inagg ps}) that finishes what the pool does not (ATP's
 * fallback, ESA's preempted partials). Workers are the unchanged {@code inagg worker}s: they join here and take a
 * result from the switch or from their server.
 */
@Command(
    name = "esa-switch",
    mixinStandardHelpOptions = true,
    description = {"Run the shared-pool switch of ESA (or ATP) on a UDP port until stopped (Ctrl-C) or --duration "
        + "elapses: one pool of --aggregators shared by every --job, a higher-priority job's packet preempting a "
        + "lower one's partial sum (ESA), what does not fit going to the job's parameter server (--server, an "
        + "`inagg ps`). docs/esa.md."})
public final class EsaSwitchCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--bind", defaultValue = "0.0.0.0:9000",
        description = "UDP address to listen on (default ${DEFAULT-VALUE}).")
    private String bind;

    @Option(names = "--aggregators", defaultValue = "64",
        description = "Aggregators in the shared pool (default ${DEFAULT-VALUE}).")
    private int aggregators;

    @Option(names = "--mode", defaultValue = "esa",
        description = "esa (free an aggregator when its sum leaves; preemption by priority) or atp (hold it until the "
            + "server's result comes back through the switch; no preemption) (default ${DEFAULT-VALUE}).")
    private String mode;

    @Option(names = "--policy", defaultValue = "job-table",
        description = "Where priorities come from: job-table (the --job's PRIORITY), header (the packets' field) or "
            + "srf (shortest remaining first, from the job's bytes) (default ${DEFAULT-VALUE}).")
    private String policy;

    @Option(names = "--job", required = true, paramLabel = "ID:WORKERS:WINDOW[:LANES[:PRIORITY[:BYTES]]]",
        description = "A job (repeatable): its workers, the window its JOIN_ACK grants (blocks in flight per worker, "
            + "may exceed the pool), lanes per packet (256), priority 0..255 (1; higher preempts lower under esa) "
            + "and its gradient bytes (0; srf's starting point).")
    private List<String> jobs = new ArrayList<>();

    @Option(names = "--source", split = ",", paramLabel = "JOB:WORKER=HOST:PORT", required = true,
        description = "Every worker's UDP source, e.g. 1:0=10.0.0.1:9101 (repeatable): JOINs are answered only from "
            + "there.")
    private List<String> sources = new ArrayList<>();

    @Option(names = "--server", split = ",", paramLabel = "JOB=HOST:PORT", required = true,
        description = "Each job's parameter server (an `inagg ps` with the same --job ID:WORKERS:WINDOW:LANES).")
    private List<String> servers = new ArrayList<>();

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
        final AllocationMode allocation = parseMode(mode);
        final PriorityPolicy priorities = parsePolicy(policy);
        final List<JobSpec> parsed = jobs.stream().map(EsaSwitchCommand::parseJob).toList();
        final List<SwitchJobConfig> asSlotJobs = parsed.stream()
            .map(job -> new SwitchJobConfig(job.jobId(), job.workers(), job.window(), job.lanes())).toList();
        final Map<Integer, InetSocketAddress> serverByJob = parseServers(servers, parsed);
        final EsaSwitchContext context = new EsaSwitchContext().bind(Addresses.parse("--bind", bind))
            .aggregators(aggregators).mode(allocation).policy(priorities).jobs(parsed)
            .sources(SwitchCommand.parseSources(sources, asSlotJobs)).servers(serverByJob)
            .maxPeers(service.maxPeers).idle(service.idle)
            .decorator(udp -> FaultInjectingTransport.wrap(capture.wrap(udp, FrameHeaders.udp(udp)),
                service.loss > 0 ? FaultConfig.lossy(service.loss, 3) : FaultConfig.NONE))
            .counters(where -> countersOptions.open("esa-switch", "esa-switch " + where + " jobs "
                + String.join(",", jobs), 64 + TransportCounter.values().length, out), countersOptions::close);
        final EsaSwitchNode node = EsaSwitchNode.launch(context);
        Runtime.getRuntime().addShutdownHook(new Thread(node::close));
        out.printf(Locale.ROOT, "inagg esa-switch listening on udp://%s:%d, %d aggregators, mode %s, priorities %s, "
                + "jobs: %s, servers: %s%n", node.localAddress().getHostString(), node.localAddress().getPort(),
            aggregators, allocation, priorities, parsed, serverByJob);
        out.println("  " + node.describeIo());
        out.flush();
        service.runUntilStopped(node::awaitClose, () -> report(out, node));
        node.close();
        report(out, node);
        capture.report(out);
        return 0;
    }

    private static void report(final PrintWriter out, final EsaSwitchNode node)
    {
        out.println(node.describeCounters());
        out.flush();
    }

    static AllocationMode parseMode(final String text)
    {
        return switch (text)
        {
            case "esa" -> AllocationMode.PREEMPTIVE;
            case "atp" -> AllocationMode.DEALLOCATE_ON_ACK;
            default -> throw new IllegalArgumentException("--mode must be esa or atp, not '" + text + "'");
        };
    }

    static PriorityPolicy parsePolicy(final String text)
    {
        return switch (text)
        {
            case "job-table" -> PriorityPolicy.JOB_TABLE;
            case "header" -> PriorityPolicy.HEADER;
            case "srf" -> PriorityPolicy.SHORTEST_REMAINING_FIRST;
            default -> throw new IllegalArgumentException("--policy must be job-table, header or srf, not '" + text
                + "'");
        };
    }

    /** {@code ID:WORKERS:WINDOW[:LANES[:PRIORITY[:BYTES]]]}, each part checked (a message naming the value). */
    static JobSpec parseJob(final String text)
    {
        final String[] parts = text.split(":", -1);
        if (parts.length < 3 || parts.length > 6)
        {
            throw new IllegalArgumentException("--job wants ID:WORKERS:WINDOW[:LANES[:PRIORITY[:BYTES]]], got '" + text
                + "'");
        }
        try
        {
            final int id = Integer.parseInt(parts[0]);
            final int workers = Integer.parseInt(parts[1]);
            final int window = Integer.parseInt(parts[2]);
            final int lanes = parts.length > 3 ? Integer.parseInt(parts[3]) : SwitchJobConfig.DEFAULT_LANES;
            final int priority = parts.length > 4 ? Integer.parseInt(parts[4]) : 1;
            final long bytes = parts.length > 5 ? Long.parseLong(parts[5]) : 0;
            // the table row's own checks, with a placeholder peer per worker, so a bad value is named before any socket
            new EsaJobConfig(id, workers, lanes, window, priority, new int[Math.max(0, workers)], 0, bytes);
            return new JobSpec(id, workers, window, lanes, priority, bytes);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--job '" + text + "': " + ex.getMessage());
        }
    }

    /** --server values: at most one per job, each naming a --job. */
    static Map<Integer, InetSocketAddress> parseServers(final List<String> values, final List<JobSpec> jobs)
    {
        final Map<Integer, InetSocketAddress> byJob = new TreeMap<>();
        for (final String value : values)
        {
            final int equals = value.indexOf('=');
            if (equals < 1)
            {
                throw new IllegalArgumentException("--server wants JOB=HOST:PORT, got '" + value + "'");
            }
            final int jobId;
            try
            {
                jobId = Integer.parseInt(value.substring(0, equals));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--server '" + value + "': " + ex.getMessage());
            }
            if (jobs.stream().noneMatch(job -> job.jobId() == jobId))
            {
                throw new IllegalArgumentException("--server '" + value + "' names job " + jobId + ", which no --job "
                    + "gives");
            }
            if (byJob.put(jobId, Addresses.parse("--server", value.substring(equals + 1))) != null)
            {
                throw new IllegalArgumentException("--server gives job " + jobId + "'s server twice");
            }
        }
        return byJob; // a job without a server: EsaSwitchContext.conclude
    }
}
