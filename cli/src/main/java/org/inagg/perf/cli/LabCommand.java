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
import java.util.concurrent.Callable;
import java.util.stream.IntStream;

import org.inagg.p4.control.JobSpec;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.perf.lab.Bmv2Lab;
import org.inagg.perf.lab.HostNetwork;
import org.inagg.perf.lab.InaggProcess;
import org.inagg.services.agent.HostAgentContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code inagg lab}: emulated hosts through a real P4 target, for trying the PyTorch backend (or anything that talks to
 * a per-host agent) across hosts on one machine. H network namespaces are wired by veths to bmv2 {@code simple_switch}
 * running {@code inagg_v1model.p4}, one slot job over them is programmed through the switch's run-time control plane,
 * and each host runs its agent ({@code inagg agent}) bound to the source registered for it. The ranks of a host reach
 * its agent through /dev/shm as on a real host; the job's traffic between the agents crosses simple_switch. It prints
 * one line per host with what its ranks need ({@code INAGG_AGENT}, {@code INAGG_HOST_ID}, {@code INAGG_SWITCH_JOB}),
 * then {@code lab ready}, and runs until stopped (Ctrl-C or SIGTERM), when it removes every
 * namespace and process it made ({@link Bmv2Lab}). Needs root, iproute2, ethtool and the P4 tools ({@code INAGG_P4TOOLS}).
 */
@Command(name = "lab", mixinStandardHelpOptions = true,
    description = "Emulated hosts through bmv2: H network namespaces on veths to simple_switch running "
        + "inagg_v1model.p4, one job over them, the per-host agent on each; ranks started anywhere on this machine "
        + "use host n's agent with INAGG_AGENT=<its socket> INAGG_HOST_ID=<n> INAGG_SWITCH_JOB=<job>. Runs until "
        + "Ctrl-C, then removes everything it made. Needs root and the P4 tools (INAGG_P4TOOLS).")
public final class LabCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--hosts", defaultValue = "2", description = "Emulated hosts (default ${DEFAULT-VALUE}).")
    private int hosts;

    @Option(names = "--job-id", defaultValue = "1", description = "The switch job (default ${DEFAULT-VALUE}).")
    private int jobId;

    @Option(names = "--slots", defaultValue = "16",
        description = "The job's slots: bmv2 drops what its queues cannot hold, so keep it small "
            + "(default ${DEFAULT-VALUE}).")
    private int slots;

    @Option(names = "--lanes", defaultValue = "120",
        description = "Lanes per packet, at most 256 on the v1model program (default ${DEFAULT-VALUE}: simple_switch "
            + "grows a packet by at most 512 bytes, and the answer to a header-only ALL_GATHER packet carries 4 bytes "
            + "a lane; above 128 lanes an all-gather or broadcast aborts simple_switch).")
    private int lanes;

    @Option(names = "--name", defaultValue = "lab",
        description = "Agent name prefix: host n's agent is <name>-h<n>, socket /dev/shm/inagg-<uid>/inagg-agent-<name>-h<n>.sock "
            + "(default ${DEFAULT-VALUE}).")
    private String name;

    @Option(names = "--retransmit-us", defaultValue = "100000",
        description = "The agents' smallest retransmission timeout through bmv2, microseconds (default "
            + "${DEFAULT-VALUE}: bmv2 takes milliseconds per packet; with the protocol's 2 ms, half of what bmv2 "
            + "received were resends).")
    private long retransmitUs;

    @Option(names = "--agent-option", paramLabel = "OPTION",
        description = "Passed to every agent, e.g. --agent-option=--slot-bytes=1048576 (repeatable).")
    private List<String> agentOptions = new ArrayList<>();

    @Option(names = "--stats-interval", defaultValue = "0",
        description = "Print bmv2's packet counters every N seconds while they change; 0 never (default "
            + "${DEFAULT-VALUE}).")
    private int statsInterval;

    @Option(names = "--work-dir", description = "Folder of the logs (default: a new temporary folder).")
    private Path workDir;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        if (hosts < 2 || hosts > HostNetwork.MAX_HOSTS)
        {
            throw new IllegalArgumentException("--hosts must be 2.." + HostNetwork.MAX_HOSTS + ", not " + hosts);
        }
        if (!name.matches("[A-Za-z0-9._-]{1,40}"))
        {
            throw new IllegalArgumentException("--name must be 1..40 of [A-Za-z0-9._-], not '" + name + "'");
        }
        final Path work = workFolder();
        try (Bmv2Lab lab = Bmv2Lab.start(hosts, work, out))
        {
            final JobSpec job = lab.addSlotJob(jobId, slots, 0, lanes, Bmv2LocalRun.MULTICAST_GROUP,
                IntStream.rangeClosed(1, hosts).toArray());
            out.printf(Locale.ROOT, "bmv2: job %d programmed (%d hosts, slots 0..%d, %d lanes); logs in %s%n", jobId,
                hosts, slots - 1, lanes, work);
            final List<InaggProcess> agents = new ArrayList<>();
            for (int h = 1; h <= hosts; h++)
            {
                final String agentName = name + "-h" + h;
                final List<String> options = new ArrayList<>(List.of("--retransmit-us", Long.toString(retransmitUs)));
                options.addAll(agentOptions);
                agents.add(lab.startAgent(h, agentName, options));
                final HostNetwork.Host host = lab.network().host(h);
                out.printf(Locale.ROOT, "host %d: namespace %s, %s:%d, worker %d of job %d; its ranks: "
                    + "INAGG_AGENT=%s INAGG_HOST_ID=%d INAGG_SWITCH_JOB=%d%n", h,
                    host.namespace(), host.ipv4(), Bmv2Lab.WORKER_UDP_BASE + h, job.workers().get(h - 1).peer(),
                    jobId, HostAgentContext.defaultDirectory().resolve("inagg-agent-" + agentName + ".sock"), h, jobId);
            }
            out.println("lab ready (Ctrl-C to stop)");
            out.flush();
            // Ctrl-C and SIGTERM end the JVM here: the lab's shutdown hook removes what it made.
            long nextStatsNs = System.nanoTime();
            String lastStats = "";
            while (agents.stream().allMatch(agent -> agent.process().isAlive()))
            {
                if (statsInterval > 0 && System.nanoTime() - nextStatsNs >= 0)
                {
                    nextStatsNs = System.nanoTime() + statsInterval * 1_000_000_000L;
                    final Map<SwitchCounter, Long> counters = lab.control().counters();
                    final String stats = String.format(Locale.ROOT, "bmv2: received %d, contributions %d, results "
                        + "sent %d, re-sent to one %d", counters.getOrDefault(SwitchCounter.RECEIVED, 0L),
                        counters.getOrDefault(SwitchCounter.CONTRIBUTIONS, 0L),
                        counters.getOrDefault(SwitchCounter.RESULTS_SENT, 0L),
                        counters.getOrDefault(SwitchCounter.RETRANSMIT_REPLIES, 0L));
                    if (!stats.equals(lastStats))
                    {
                        out.println(stats);
                        out.flush();
                        lastStats = stats;
                    }
                }
                Thread.sleep(200);
            }
            for (int h = 1; h <= hosts; h++)
            {
                if (!agents.get(h - 1).process().isAlive())
                {
                    out.println("lab: the agent of host " + h + " exited:\n" + agents.get(h - 1).output());
                }
            }
            out.flush();
            return 1;
        }
    }

    private Path workFolder()
    {
        try
        {
            return workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory("inagg-lab-");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("creating the work folder", ex);
        }
    }
}
