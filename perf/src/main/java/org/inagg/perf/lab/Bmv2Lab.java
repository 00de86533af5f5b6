package org.inagg.perf.lab;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.inagg.p4.bmv2.Bmv2Program;
import org.inagg.p4.bmv2.Bmv2Switch;
import org.inagg.p4.bmv2.P4Toolchain;
import org.inagg.p4.bmv2.SimpleSwitchProcess;
import org.inagg.p4.control.JobSpec;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.p4.control.WorkerEndpoint;
import org.inagg.p4.control.InaggP4;

/**
 * A bmv2 {@code simple_switch} running {@code inagg_v1model.p4} with hosts wired to its ports ({@link HostNetwork}),
 * programmed at run time through {@link Bmv2Switch}, and {@code inagg worker} processes on the hosts: the real P4
 * target with unmodified workers, on one machine.
 * <p>
 * {@link #close()} stops the workers, the switch and deletes the namespaces; a JVM shutdown hook does the same on
 * Ctrl-C or SIGTERM, and {@link HostNetwork#removeStale()} clears what a lab killed outright left behind.
 */
public final class Bmv2Lab implements AutoCloseable
{
    /** First UDP port of the workers: host n binds {@code WORKER_UDP_BASE + n}. */
    public static final int WORKER_UDP_BASE = 40_000;
    /** UDP port of a parameter server ({@link #startParameterServer}). */
    public static final int SERVER_UDP_PORT = 9100;

    private final HostNetwork network;
    private final SimpleSwitchProcess simpleSwitch;
    private final Bmv2Switch control;
    private final Path workDirectory;
    private final List<InaggProcess> processes = new ArrayList<>();
    private final Thread shutdownHook;
    private boolean closed;

    private Bmv2Lab(
        final HostNetwork network, final SimpleSwitchProcess simpleSwitch, final Bmv2Switch control,
        final Path workDirectory)
    {
        this.network = network;
        this.simpleSwitch = simpleSwitch;
        this.control = control;
        this.workDirectory = workDirectory;
        this.shutdownHook = new Thread(this::closeQuietly, "inagg bmv2 lab teardown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Compiles (or reuses) the program, wires {@code hosts} hosts to a fresh simple_switch and takes control of it.
     *
     * @param progress where to say what is happening (the compile takes minutes the first time); may be null.
     * @throws LabException or {@link org.inagg.p4.bmv2.Bmv2Exception} naming what is missing or what failed.
     */
    public static Bmv2Lab start(final int hosts, final Path workDirectory, final PrintWriter progress)
    {
        final Consumer<String> say = line ->
        {
            if (progress != null)
            {
                progress.println(line);
                progress.flush();
            }
        };
        final P4Toolchain toolchain = P4Toolchain.locate();
        say.accept("bmv2: program " + Bmv2Program.V1MODEL_MAIN + " (compiled once per source change into "
            + Bmv2Program.cacheFolder() + "; the first compile takes a minute or two)");
        final Path json = Bmv2Program.v1modelJson(toolchain, Bmv2Program.cacheFolder());
        final HostNetwork network = HostNetwork.create(hosts);
        SimpleSwitchProcess simpleSwitch = null;
        try
        {
            final SimpleSwitchProcess.Context context = new SimpleSwitchProcess.Context().toolchain(toolchain).json(json)
                .commandPrefix(network.switchExec()).workDirectory(workDirectory.resolve("simple_switch"));
            network.switchPorts().forEach(context::port);
            simpleSwitch = SimpleSwitchProcess.start(context);
            say.accept("bmv2: simple_switch pid " + simpleSwitch.pid() + " in namespace " + network.switchNamespace()
                + ", " + hosts + " hosts on ports 1.." + hosts + " (namespaces " + HostNetwork.PREFIX + network.tag()
                + "-h*)");
            final Bmv2Switch control = new Bmv2Switch(simpleSwitch.cli(), new SwitchAddress(
                WorkerEndpoint.parseMac(HostNetwork.SWITCH_MAC), WorkerEndpoint.parseIpv4(HostNetwork.SWITCH_IPV4)));
            for (final HostNetwork.Host host : network.hosts())
            {
                control.addRoute(WorkerEndpoint.parseIpv4(host.ipv4()), host.port(),
                    WorkerEndpoint.parseMac(host.mac()));
            }
            return new Bmv2Lab(network, simpleSwitch, control, workDirectory);
        }
        catch (final RuntimeException ex)
        {
            if (simpleSwitch != null)
            {
                simpleSwitch.close();
            }
            network.close();
            throw ex;
        }
    }

    public HostNetwork network()
    {
        return network;
    }

    public Bmv2Switch control()
    {
        return control;
    }

    public SimpleSwitchProcess simpleSwitch()
    {
        return simpleSwitch;
    }

    /** Host n's registered endpoint as worker {@code workerId}: port n, its MAC and address, UDP port 40000 + n. */
    public WorkerEndpoint endpoint(final int workerId, final int hostNumber)
    {
        final HostNetwork.Host host = network.host(hostNumber);
        return new WorkerEndpoint(workerId, host.port(), WorkerEndpoint.parseMac(host.mac()),
            WorkerEndpoint.parseIpv4(host.ipv4()), WORKER_UDP_BASE + hostNumber);
    }

    /**
     * Adds a slot-protocol job whose worker w runs on host {@code hostNumbers[w]}.
     *
     * @return the job as programmed.
     */
    public JobSpec addSlotJob(
        final int jobId, final int slots, final int slotBase, final int lanes, final int multicastGroup,
        final int... hostNumbers)
    {
        final List<WorkerEndpoint> workers = new ArrayList<>();
        for (int w = 0; w < hostNumbers.length; w++)
        {
            workers.add(endpoint(w, hostNumbers[w]));
        }
        final JobSpec job = new JobSpec(jobId, slots, slotBase, lanes, multicastGroup, workers, null);
        control.addJob(job);
        return job;
    }

    /**
     * Starts one {@code inagg worker} per worker of {@code job} on its host, bound to its registered endpoint, sending
     * to the switch, with {@code args} added (elements, iterations, dtype, loss, ...).
     */
    public List<InaggProcess> startWorkers(final JobSpec job, final List<String> args)
    {
        final List<InaggProcess> started = new ArrayList<>();
        for (final WorkerEndpoint endpoint : job.workers())
        {
            started.add(startWorker(job.jobId(), endpoint.peer(), job.workerCount(), endpoint.port(),
                HostNetwork.SWITCH_IPV4 + ":" + InaggP4.UDP_PORT, args));
        }
        return started;
    }

    /**
     * Starts {@code inagg worker} {@code workerId} of {@code workers} for {@code jobId} on host {@code hostNumber},
     * bound to 10.0.0.n:40000+n, sending to {@code target} (host:port: the switch, or a parameter server that the
     * worker reaches through the switch's IPv4 forwarding).
     */
    public InaggProcess startWorker(
        final int jobId, final int workerId, final int workers, final int hostNumber, final String target,
        final List<String> args)
    {
        final HostNetwork.Host host = network.host(hostNumber);
        final List<String> command = new ArrayList<>(List.of("worker",
            "--switch", target,
            "--bind", host.ipv4() + ":" + (WORKER_UDP_BASE + hostNumber),
            "--job-id", Integer.toString(jobId),
            "--worker-id", Integer.toString(workerId),
            "--workers", Integer.toString(workers),
            "--no-progress"));
        command.addAll(args);
        return track(InaggProcess.start(host.exec(),
            workDirectory.resolve("job" + jobId + "-worker" + workerId + ".log"), command));
    }

    /**
     * Starts the per-host agent ({@code inagg agent}, docs/pytorch.md) of host {@code hostNumber}, named
     * {@code name}, bound to the host's registered endpoint (10.0.0.n:40000+n) and sending to the switch, with
     * {@code args} added, and waits until it listens on its Unix socket. Its socket and shared memory are in /dev/shm/inagg-<uid>,
     * which the network namespace shares with the rest of the machine: ranks started anywhere on it reach the agent.
     */
    public InaggProcess startAgent(final int hostNumber, final String name, final List<String> args)
        throws InterruptedException
    {
        final HostNetwork.Host host = network.host(hostNumber);
        final List<String> command = new ArrayList<>(List.of("agent", "--name", name,
            "--switch", HostNetwork.SWITCH_IPV4 + ":" + InaggP4.UDP_PORT,
            "--bind", host.ipv4() + ":" + (WORKER_UDP_BASE + hostNumber)));
        command.addAll(args);
        final InaggProcess process = track(InaggProcess.start(host.exec(),
            workDirectory.resolve("agent-h" + hostNumber + ".log"), command));
        awaitListening(process, "inagg agent on " + host.namespace());
        return process;
    }

    /**
     * Starts {@code inagg ps} on host {@code hostNumber} at 10.0.0.n:{@value #SERVER_UDP_PORT} for a job of
     * {@code workers} workers whose worker w runs on host {@code workerHosts[w]}, and waits until it listens.
     *
     * @param job {@code ID:WORKERS[:SLOTS[:LANES]]}, as the switch has the job.
     */
    public InaggProcess startParameterServer(final int hostNumber, final String job, final int... workerHosts)
        throws InterruptedException
    {
        final HostNetwork.Host host = network.host(hostNumber);
        final List<String> addresses = new ArrayList<>();
        for (final int workerHost : workerHosts)
        {
            addresses.add(network.host(workerHost).ipv4() + ":" + (WORKER_UDP_BASE + workerHost));
        }
        final InaggProcess process = track(InaggProcess.start(host.exec(), workDirectory.resolve("ps-h" + hostNumber
            + ".log"), List.of("ps", "--bind", host.ipv4() + ":" + SERVER_UDP_PORT, "--job", job, "--workers-at",
            String.join(",", addresses), "--stats-interval", "0")));
        awaitListening(process, "inagg ps on " + host.namespace());
        return process;
    }

    /** Host n's endpoint as a parameter server: port n, its MAC and address, UDP port {@value #SERVER_UDP_PORT}. */
    public WorkerEndpoint serverEndpoint(final int hostNumber)
    {
        final HostNetwork.Host host = network.host(hostNumber);
        return new WorkerEndpoint(0, host.port(), WorkerEndpoint.parseMac(host.mac()),
            WorkerEndpoint.parseIpv4(host.ipv4()), SERVER_UDP_PORT);
    }

    private synchronized InaggProcess track(final InaggProcess process)
    {
        processes.add(process);
        return process;
    }

    private static void awaitListening(final InaggProcess process, final String what) throws InterruptedException
    {
        final long deadline = System.nanoTime() + 60_000_000_000L;
        while (process.process().isAlive() && !process.output().contains("listening")
            && System.nanoTime() < deadline)
        {
            Thread.sleep(20);
        }
        if (!process.output().contains("listening"))
        {
            process.kill();
            throw new LabException(what + " did not start:\n" + process.output());
        }
    }

    /**
     * Replaces the P4 target by the software switch: stops simple_switch, bridges its ports
     * ({@link HostNetwork#bridgeSwitchPorts()}) and starts {@code inagg switch} in the switch namespace on the switch's
     * address and the inagg port, with {@code args} (its jobs), waiting until it listens. The same hosts and workers
     * then run against the Java pipeline: a like-for-like comparison of the two targets.
     */
    public InaggProcess replaceBySoftwareSwitch(final List<String> args) throws InterruptedException
    {
        simpleSwitch.close();
        network.bridgeSwitchPorts();
        final List<String> command = new ArrayList<>(List.of("switch",
            "--bind", HostNetwork.SWITCH_IPV4 + ":" + InaggP4.UDP_PORT, "--stats-interval", "0"));
        command.addAll(args);
        final InaggProcess process = track(InaggProcess.start(network.switchExec(),
            workDirectory.resolve("switch.log"), command));
        awaitListening(process, "inagg switch in " + network.switchNamespace());
        return process;
    }

    /** Waits for the workers (each at most {@code seconds}) and reads their reports, in worker id order. */
    public static List<WorkerReport> await(final List<InaggProcess> workers, final long seconds)
        throws InterruptedException
    {
        final List<WorkerReport> reports = new ArrayList<>();
        final long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        for (int w = 0; w < workers.size(); w++)
        {
            final long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000_000L);
            final int exit = workers.get(w).await(left);
            reports.add(WorkerReport.parse(w, exit, workers.get(w).output()));
        }
        return reports;
    }

    /** Stops every worker, the switch, and deletes the namespaces; safe to call twice. */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try
        {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        }
        catch (final IllegalStateException ignored)
        {
            // the JVM is shutting down: this is the hook
        }
        // SIGTERM first, so that agents remove their sockets and shared memory and workers their counters files.
        for (final InaggProcess process : processes)
        {
            process.process().destroy();
        }
        for (final InaggProcess process : processes)
        {
            try
            {
                if (!process.process().waitFor(5, java.util.concurrent.TimeUnit.SECONDS))
                {
                    process.process().destroyForcibly();
                }
            }
            catch (final InterruptedException ex)
            {
                process.process().destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        simpleSwitch.close();
        network.close();
    }

    private void closeQuietly()
    {
        try
        {
            close();
        }
        catch (final RuntimeException ignored)
        {
            // best effort while the JVM exits
        }
    }
}
