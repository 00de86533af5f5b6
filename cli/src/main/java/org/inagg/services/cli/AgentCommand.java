package org.inagg.services.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

import org.inagg.agent.CounterRegistry;
import org.inagg.services.agent.HostAgent;
import org.inagg.services.agent.HostAgentContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code inagg agent}: the per-host agent that local PyTorch ranks ({@code integrations/pytorch}) hand their tensors to
 * through shared memory (docs/pytorch.md).
 */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    description = "Run the per-host agent: local ranks all-reduce through shared memory, several hosts through the "
        + "switch. Runs until stopped (Ctrl-C) or --idle-exit elapses without a job.")
public final class AgentCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--name", defaultValue = HostAgentContext.NAME_DEFAULT,
        description = "Agent name: socket <dir>/inagg-agent-<name>.sock (default ${DEFAULT-VALUE}).")
    private String name;

    @Option(names = "--dir", description = "Private directory of the socket and the jobs' shared-memory files: made "
        + "mode 0700 when missing, refused when it is a link, another user's, or open to others (default "
        + "/dev/shm/inagg-<uid>).")
    private Path directory;

    @Option(names = "--allow-group", paramLabel = "GROUP",
        description = "Let ranks whose effective group is GROUP use this agent too (default: this user only).")
    private String allowGroup;

    @Option(names = "--socket", description = "Socket path, instead of the one derived from --dir and --name.")
    private Path socket;

    @Option(names = "--slot-bytes", defaultValue = "" + HostAgentContext.SLOT_BYTES_DEFAULT,
        description = "Bytes each rank hands over per round (multiple of 4096; larger tensors go in several rounds; "
            + "default ${DEFAULT-VALUE}); the same on every host of a job (its ranks refuse hosts that differ).")
    private long slotBytes;

    @Option(names = "--chunk-bytes", defaultValue = "" + HostAgentContext.CHUNK_BYTES_AUTO,
        description = "Bytes of the chunks a sum is copied in, summed and sent through the switch in, so that those "
            + "stages overlap (multiple of 4096; 0: whole rounds; default: " + HostAgentContext.CHUNK_BYTES_DEFAULT
            + " where the host has more cores than the job's local ranks, else 0).")
    private long chunkBytes;

    @Option(names = "--network-chunk-bytes", defaultValue = "" + HostAgentContext.NETWORK_CHUNK_BYTES_DEFAULT,
        description = "Bytes of the chunks a sum goes through the switch and is copied out in, overlapping the next "
            + "chunk's sum and copies (multiple of 4096; default ${DEFAULT-VALUE}: the round whole, once summed); the same on "
            + "every host of a job (its ranks refuse hosts that differ).")
    private long networkChunkBytes;

    @Option(names = "--reducer-threads", defaultValue = "-1",
        description = "Threads that sum large rounds (default: min(2, cores)).")
    private int reducerThreads;

    @Option(names = "--switch", description = "HOST:PORT of the switch for jobs spanning several hosts (UDP).")
    private String switchAddress;

    @Option(names = "--bind", paramLabel = "HOST:PORT",
        description = "Local UDP address that jobs spanning several hosts send from: the source registered for this "
            + "host on a switch with admission (default: any address, an ephemeral port).")
    private String bindAddress;

    @Option(names = "--controller", paramLabel = "URL",
        description = "For jobs spanning several hosts: register with this controller (docs/controller.md) as one "
            + "worker of the job named by the ranks' job key, which gives the switch and the job id (default: "
            + "$INAGG_CONTROLLER; without either, --switch and INAGG_SWITCH_JOB).")
    private String controller;

    @Option(names = "--controller-wait-ms", defaultValue = "60000",
        description = "How long to wait for the other hosts' agents to register (default ${DEFAULT-VALUE}).")
    private long controllerWaitMs;

    @Option(names = "--collective-timeout-ms", defaultValue = "0",
        description = "How long the ranks that submitted wait for the missing ones before the collective fails naming "
            + "them, for ranks that do not say (torch passes its process group timeout); 0: the agent's default, "
            + "30 min (default ${DEFAULT-VALUE}).")
    private long collectiveTimeoutMs;

    @Option(names = "--job-key", description = "Serve this job only (refuse ranks of others).")
    private String jobKey;

    @Option(names = "--idle-exit-ms", defaultValue = "0",
        description = "Exit after this long without a job; 0 never (default ${DEFAULT-VALUE}).")
    private long idleExitMs;

    @Option(names = "--max-lanes", defaultValue = "" + org.inagg.services.worker.WorkerContext.MAX_LANES_DEFAULT,
        description = "Largest lanes per packet a multi-host job's switch may ask for, as inagg worker's (default "
            + "${DEFAULT-VALUE}: 1500-byte MTU packets; 2048 for a switch job of packets that fit a 9000-byte MTU).")
    private int maxLanes;

    @Option(names = "--peer-timeout-ms", defaultValue = "" + HostAgentContext.PEER_TIMEOUT_DEFAULT_MS,
        description = "How long a round through the switch may go without progress (default ${DEFAULT-VALUE}).")
    private long peerTimeoutMs;

    @Option(names = "--retransmit-us", defaultValue = "0",
        description = "Smallest retransmission timeout of rounds through the switch, microseconds; 0: the protocol's "
            + "default, 2000 (a software target such as bmv2 wants 100000) (default ${DEFAULT-VALUE}).")
    private long retransmitUs;

    @Option(names = "--log", paramLabel = "FILE",
        description = "Write the log to FILE (mode 0600, never through a link) instead of stderr, moved to FILE.1 past "
            + "--log-max-bytes (default: stderr).")
    private Path log;

    @Option(names = "--log-max-bytes", defaultValue = "1048576",
        description = "Size at which --log becomes FILE.1 and a new one starts (default ${DEFAULT-VALUE}).")
    private long logMaxBytes;

    @Mixin
    private CountersOptions countersOptions;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        CliNumbers.require("--collective-timeout-ms", collectiveTimeoutMs, 0, Integer.MAX_VALUE);
        final BoundedLogHandler logFile = log == null ? null : BoundedLogHandler.install(log, logMaxBytes);
        final CounterRegistry counters = countersOptions.open("agent", "agent " + name, 64, out);
        final HostAgentContext context = new HostAgentContext().name(name).directory(directory).socketPath(socket)
            .allowGroup(allowGroup)
            .slotBytes(slotBytes).chunkBytes(chunkBytes).networkChunkBytes(networkChunkBytes).reducerThreads(reducerThreads).jobKey(jobKey)
            .idleExit(Duration.ofMillis(idleExitMs)).peerTimeout(Duration.ofMillis(peerTimeoutMs))
            .counters(counters)
            .switchAddress(switchAddress == null ? null : Addresses.parse("--switch", switchAddress))
            .bindAddress(bindAddress == null ? new java.net.InetSocketAddress(0) : Addresses.parse("--bind", bindAddress))
            .controllerWait(Duration.ofMillis(controllerWaitMs));
        if (controller != null)
        {
            context.controller(controller);
        }
        context.maxLanes(maxLanes);
        if (retransmitUs < 0)
        {
            throw new IllegalArgumentException("--retransmit-us must not be negative, not " + retransmitUs);
        }
        if (retransmitUs > 0)
        {
            context.retransmitTimeout(Duration.ofNanos(retransmitUs * 1000));
        }
        if (collectiveTimeoutMs > 0)
        {
            context.collectiveTimeout(Duration.ofMillis(collectiveTimeoutMs));
        }
        try (HostAgent agent = HostAgent.launch(context))
        {
            Runtime.getRuntime().addShutdownHook(new Thread(agent::close));
            out.printf("inagg agent %s listening on %s%n", context.name(), context.socketPath());
            out.flush();
            agent.awaitClose();
        }
        finally
        {
            countersOptions.close();
            if (logFile != null)
            {
                logFile.close();
            }
        }
        return 0;
    }
}
