package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.profile.ProfileOptions;

/**
 * inagg as deployed first: an {@code inagg switch} process and W {@code inagg worker} processes over UDP on the
 * loopback interface (or the switch in an emulated cluster's switch namespace and worker r on host r + 1), each doing the run's warm-up all-reduces untimed first (as every peer does). The slowest worker's
 * elements/s is the job's (and each worker's result must be within the fixed-point bound of the exact sum); the note
 * gives the slowest worker's p50 all-reduce time and the retransmitted share of the packets the workers sent in the timed ones.
 */
public final class InaggProcessPeer implements Peer
{
    /** The switch's lanes per packet when the job names none. */
    static final int DEFAULT_LANES = org.inagg.p4.softswitch.SwitchJobConfig.DEFAULT_LANES;
    /** The switch's UDP port where it has an address of its own (an emulated cluster's switch namespace). */
    static final int SWITCH_PORT = 9000;

    /** Lanes of a datagram that fills the loopback interface's 64 KiB (UDP payload at most 65,507 bytes). */
    public static final int LOOPBACK_LANES = 16000;
    /** Slots for {@link #LOOPBACK_LANES}: 16 x 64 KB a worker stays within the switch's socket buffer at 4 workers. */
    public static final int LOOPBACK_SLOTS = 16;

    private final int lanes;
    private final int slots;
    private final List<String> jvmOptions;
    private final List<String> workerOptions;

    /**
     * @param lanes         lanes per packet of the job (the switch's --job), 0 for the switch's default (256 lanes,
     *                      packets that fit a 1500-byte MTU).
     * @param slots         slots of the job, 0 for the switch's default.
     * @param jvmOptions    extra JVM options of every process (a JFR recording, a heap size).
     * @param workerOptions extra {@code inagg worker} options (an idle strategy, a retransmission timeout).
     */
    public InaggProcessPeer(final int lanes, final int slots, final List<String> jvmOptions,
        final List<String> workerOptions)
    {
        if ((lanes == 0) != (slots == 0))
        {
            throw new IllegalArgumentException("give both lanes and slots, or neither");
        }
        this.lanes = lanes;
        this.slots = slots;
        this.jvmOptions = List.copyOf(jvmOptions);
        this.workerOptions = List.copyOf(workerOptions);
    }

    @Override
    public String name()
    {
        return lanes == 0 ? "inagg UDP processes" : "inagg UDP processes, " + lanes + " lanes";
    }

    /** Across hosts with the switch's default packets only: 64 KB datagrams would be IP-fragmented on the links. */
    @Override
    public boolean runsAcrossHosts()
    {
        return lanes == 0;
    }

    /** In-network aggregation's bound ({@link LinkBounds#inaSeconds}) with the job's lanes per packet. */
    @Override
    public double boundSeconds(final int ranks, final long bytes, final double bitsPerSecond)
    {
        return LinkBounds.inaSeconds(bytes, lanes == 0 ? DEFAULT_LANES : lanes, bitsPerSecond);
    }

    /** On a fabric the switch is at the spine: each uplink carries every contribution of its leaf's hosts, both ways. */
    @Override
    public double boundSeconds(final int ranks, final long bytes, final FabricPlacement fabric)
    {
        return LinkBounds.inaSeconds(bytes, lanes == 0 ? DEFAULT_LANES : lanes, Math.min(fabric.hostBitsPerSecond(),
            fabric.uplinkBitsPerSecond() / fabric.mostHostsPerLeaf(ranks)));
    }

    @Override
    public String unavailableReason()
    {
        return null;
    }

    @Override
    public PeerResult run(final PeerRun run) throws InterruptedException
    {
        final Placement placement = run.placement();
        final int port = placement.isLoopback() ? ChildProcesses.freePort(true) : SWITCH_PORT;
        final String switchAt = placement.switchAddress() + ":" + port;
        final String w = Integer.toString(run.workers());
        try (ChildProcesses children = new ChildProcesses())
        {
            final Path switchLog = run.workDir().resolve("inagg-switch-w" + w + ".log");
            children.start(Placement.prefixed(placement.switchExec(), InaggJvm.command(switchJvmOptions(run), List.of("switch",
                "--bind", switchAt, "--open", "--job", "1:" + w + (lanes == 0 ? "" : ":" + slots + ":" + lanes),
                "--stats-interval", "0", "--duration", Long.toString(run.timeoutS())))), Map.of(), switchLog);
            final List<Process> workers = new ArrayList<>();
            final List<Path> logs = new ArrayList<>();
            for (int id = 0; id < run.workers(); id++)
            {
                final List<String> args = new ArrayList<>(List.of("worker", "--switch", switchAt,
                    "--bind", placement.rankAddress(id) + ":0", "--workers", w, "--worker-id", Integer.toString(id),
                    "-n", Integer.toString(run.elements()), "-i", Integer.toString(run.iterations()),
                    "--warmup", Integer.toString(run.warmup()), "--no-progress"));
                if (lanes > 0)
                {
                    args.addAll(List.of("--max-lanes", Integer.toString(lanes)));
                }
                args.addAll(workerOptions);
                final Path log = run.workDir().resolve("inagg-worker-w" + w + "-" + id + ".log");
                logs.add(log);
                workers.add(children.start(Placement.prefixed(placement.rankExec(id), InaggJvm.command(jvmOptions,
                    args)), Map.of(), log));
            }
            final boolean ok = ChildProcesses.awaitAll(workers,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(run.timeoutS()));
            return WorkerLogs.collect(name(), run, logs, ok, lanes == 0
                ? "switch defaults (256 lanes: 1 KiB datagrams, within a 1500-byte MTU)"
                : slots + " slots of " + lanes + " lanes (64 KB datagrams: loopback or jumbo-frame links)");
        }
    }

    /** With --profile, the switch starts its profile after the workers' warm-up contributions (their packets' count). */
    private List<String> switchJvmOptions(final PeerRun run)
    {
        if (!ProfileOptions.profiling(jvmOptions))
        {
            return jvmOptions;
        }
        final int lanesPerPacket = lanes == 0 ? DEFAULT_LANES : lanes;
        final long packets = ((long)run.elements() + lanesPerPacket - 1) / lanesPerPacket;
        final List<String> options = new ArrayList<>(jvmOptions);
        options.add(ProfileOptions.switchStartsAfter(packets * run.workers() * run.warmup()));
        return options;
    }
}
