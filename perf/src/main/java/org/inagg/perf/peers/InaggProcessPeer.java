package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.profile.ProfileOptions;
import org.inagg.services.cli.ProcessCpu;
import org.inagg.wire.InaggHeader;

/**
 * inagg as deployed first: an {@code inagg switch} process and W {@code inagg worker} processes over UDP on the
 * loopback interface (or the switch in an emulated cluster's switch namespace and worker r on host r + 1), each doing the run's warm-up all-reduces untimed first (as every peer does). The slowest worker's
 * elements/s is the job's (and each worker's result must be within the fixed-point bound of the exact sum); the note
 * gives the slowest worker's p50 all-reduce time and the retransmitted share of the packets the workers sent in the timed ones.
 */
public final class InaggProcessPeer implements Peer
{
    /** The P4 programs' lanes per packet: with {@link #DEFAULT_SLOTS}, the lanes a worker keeps in flight. */
    static final int DEFAULT_LANES = org.inagg.p4.softswitch.SwitchJobConfig.DEFAULT_LANES;
    static final int DEFAULT_SLOTS = org.inagg.p4.softswitch.SwitchJobConfig.DEFAULT_SLOTS;
    /**
     * An Ethernet MTU up to this carries the switch's default packets (which fill it, up to 363 lanes); a larger
     * (jumbo) one, packets to fill it.
     */
    public static final int STANDARD_MTU = 1500;
    private static final int HEADERS_IN_MTU = InaggHeader.HEADERS_IN_MTU;
    /** The switch's UDP port where it has an address of its own (an emulated cluster's switch namespace). */
    static final int SWITCH_PORT = 9000;

    /** Lanes of a datagram that fills the loopback interface's 64 KiB (UDP payload at most 65,507 bytes). */
    public static final int LOOPBACK_LANES = 16000;
    /** Slots for {@link #LOOPBACK_LANES}: 16 x 64 KB a worker stays within the switch's socket buffer at 4 workers. */
    public static final int LOOPBACK_SLOTS = 16;

    private final int lanes;
    private final int slots;
    /** The lanes of the job's packets: {@link #lanes}, or the switch's default on links of the peer's MTU. */
    private final int packetLanes;
    private final boolean acrossHosts;
    private final List<String> jvmOptions;
    private final List<String> workerOptions;

    /**
     * @param lanes         lanes per packet of the job (the switch's --job), 0 for the switch's default (363 lanes,
     *                      packets that fill a 1500-byte MTU, on loopback too).
     * @param slots         slots of the job, 0 for the switch's default.
     * @param jvmOptions    extra JVM options of every process (a JFR recording, a heap size).
     * @param workerOptions extra {@code inagg worker} options (an idle strategy, a retransmission timeout).
     */
    public InaggProcessPeer(final int lanes, final int slots, final List<String> jvmOptions,
        final List<String> workerOptions)
    {
        this(lanes, slots, lanes == 0, STANDARD_MTU, jvmOptions, workerOptions);
    }

    private InaggProcessPeer(final int lanes, final int slots, final boolean acrossHosts, final int mtu,
        final List<String> jvmOptions, final List<String> workerOptions)
    {
        if ((lanes == 0) != (slots == 0))
        {
            throw new IllegalArgumentException("give both lanes and slots, or neither");
        }
        this.lanes = lanes;
        this.slots = slots;
        this.packetLanes = lanes == 0 ? org.inagg.p4.softswitch.SwitchJobConfig.lanesFillingMtu(mtu) : lanes;
        this.acrossHosts = acrossHosts;
        this.jvmOptions = List.copyOf(jvmOptions);
        this.workerOptions = List.copyOf(workerOptions);
    }

    /**
     * The peer for links of {@code mtu} bytes: the switch's defaults up to {@link #STANDARD_MTU}; on jumbo-frame links
     * packets that fill the MTU (the largest power of two of lanes that fits) and as many slots as keep the default
     * job's lanes in flight (128 x 256: 16 slots of 2,048 lanes at MTU 9000), so a worker queues no more bytes on its
     * link than with the defaults.
     */
    public static InaggProcessPeer forMtu(final int mtu, final List<String> jvmOptions,
        final List<String> workerOptions)
    {
        if (mtu <= STANDARD_MTU)
        {
            return new InaggProcessPeer(0, 0, true, mtu, jvmOptions, workerOptions);
        }
        final int lanes = Math.min(LOOPBACK_LANES, Integer.highestOneBit((mtu - HEADERS_IN_MTU) / Integer.BYTES));
        return new InaggProcessPeer(lanes, Math.max(1, DEFAULT_SLOTS * DEFAULT_LANES / lanes), true, mtu, jvmOptions,
            workerOptions);
    }

    /**
     * The peer whose packets fill links of {@code mtu} bytes exactly (363 lanes at 1500, 2,238 at 9000; not a power of
     * two, so a tensor's last packet of each part may be short), with as many slots as keep the default job's lanes
     * in flight: what a software switch can do where the P4 programs' 256 lanes leave a quarter of each 1500-byte
     * frame unused.
     */
    public static InaggProcessPeer fillingMtu(final int mtu, final List<String> jvmOptions,
        final List<String> workerOptions)
    {
        if (mtu < HEADERS_IN_MTU + Integer.BYTES)
        {
            throw new IllegalArgumentException("MTU " + mtu + " holds no lane after the headers' " + HEADERS_IN_MTU
                + " bytes");
        }
        final int lanes = Math.min(LOOPBACK_LANES, (mtu - HEADERS_IN_MTU) / Integer.BYTES);
        return new InaggProcessPeer(lanes, Math.max(1, DEFAULT_SLOTS * DEFAULT_LANES / lanes), true, mtu, jvmOptions,
            workerOptions);
    }

    /**
     * The peer with the P4 programs' packets: {@link #DEFAULT_SLOTS} slots of {@link #DEFAULT_LANES} lanes (1,044-byte
     * messages), the software switch's default before it filled the MTU; beside the defaults, what filling it gains.
     */
    public static InaggProcessPeer p4Packets(final List<String> jvmOptions, final List<String> workerOptions)
    {
        return new InaggProcessPeer(DEFAULT_LANES, DEFAULT_SLOTS, true, STANDARD_MTU, jvmOptions, workerOptions);
    }

    @Override
    public String name()
    {
        return lanes == 0 ? "inagg UDP processes" : "inagg UDP processes, " + lanes + " lanes";
    }

    /**
     * Across hosts with packets sized to the links' MTU only ({@link #forMtu}): 64 KB datagrams would be IP-fragmented
     * on the links.
     */
    @Override
    public boolean runsAcrossHosts()
    {
        return acrossHosts;
    }

    /** In-network aggregation's bound ({@link LinkBounds#inaSeconds}) with the job's lanes per packet. */
    @Override
    public double boundSeconds(final int ranks, final long bytes, final double bitsPerSecond)
    {
        return LinkBounds.inaSeconds(bytes, packetLanes, bitsPerSecond);
    }

    /** On a fabric the switch is at the spine: each uplink carries every contribution of its leaf's hosts, both ways. */
    @Override
    public double boundSeconds(final int ranks, final long bytes, final FabricPlacement fabric)
    {
        return LinkBounds.inaSeconds(bytes, packetLanes, Math.min(fabric.hostBitsPerSecond(),
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
            // Each packet size its own logs: the peers with other lanes run in the same folder.
            final String tag = lanes == 0 ? "" : "-" + slots + "x" + lanes;
            final Path switchLog = run.workDir().resolve("inagg-switch" + tag + "-w" + w + ".log");
            final Process switchProcess = children.start(Placement.prefixed(placement.switchExec(),
                InaggJvm.command(switchJvmOptions(run), List.of("switch", "--bind", switchAt, "--open", "--job",
                    "1:" + w + (lanes == 0 ? "" : ":" + slots + ":" + lanes), "--stats-interval", "0", "--duration",
                    Long.toString(run.timeoutS())))), Map.of(), switchLog);
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
                final Path log = run.workDir().resolve("inagg-worker" + tag + "-w" + w + "-" + id + ".log");
                logs.add(log);
                workers.add(children.start(Placement.prefixed(placement.rankExec(id), InaggJvm.command(jvmOptions,
                    args)), Map.of(), log));
            }
            final boolean ok = ChildProcesses.awaitAll(workers,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(run.timeoutS()));
            // The switch prints its CPU time at exit (SIGTERM runs its shutdown hook): stop it once the workers are
            // done.
            switchProcess.destroy();
            switchProcess.waitFor(ChildProcesses.TERM_GRACE_MS, TimeUnit.MILLISECONDS);
            final double switchCpu = switchCpuSeconds(ChildProcesses.read(switchLog));
            return WorkerLogs.collect(name(), run, logs, ok, (lanes == 0
                ? "switch defaults (" + packetLanes + " lanes: " + InaggHeader.messageLength(packetLanes)
                    + "-byte datagrams, filling the links' MTU up to 1500 bytes)"
                : slots + " slots of " + lanes + " lanes (" + InaggHeader.messageLength(lanes) + "-byte messages: "
                    + (lanes == DEFAULT_LANES ? "the P4 programs' packets"
                        : acrossHosts ? "packets that fill the links' MTU" : "loopback") + ")") + (Double.isNaN(switchCpu)
                    ? "; the switch's CPU unknown (no warm-up mark or exit line in " + switchLog + ")" : ""), switchCpu);
        }
    }

    /**
     * The switch's options: it marks its CPU time (and starts its profile, with --profile) once the workers' warm-up
     * contributions (their packets' count) have been aggregated.
     */
    private List<String> switchJvmOptions(final PeerRun run)
    {
        final long packets = ((long)run.elements() + packetLanes - 1) / packetLanes;
        final List<String> options = new ArrayList<>(jvmOptions);
        options.add(ProfileOptions.switchStartsAfter(packets * run.workers() * run.warmup()));
        return options;
    }

    /**
     * The switch's CPU time from the end of the workers' warm-up to its exit, from the two lines it printed (stopped
     * as soon as the workers are done: an idle switch waits in the kernel, so what it spends between is noise); NaN
     * when either line is missing.
     */
    static double switchCpuSeconds(final String switchLog)
    {
        final double mark = ChildProcesses.lastNumber(ProcessCpu.SWITCH_MARK, switchLog);
        final double exit = ChildProcesses.lastNumber(ProcessCpu.SWITCH_EXIT, switchLog);
        return exit >= mark ? (exit - mark) / 1e9 : Double.NaN; // NaN when either is (a comparison with NaN is false)
    }
}
