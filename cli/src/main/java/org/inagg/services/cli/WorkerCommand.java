package org.inagg.services.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.inagg.api.AllReduceJob;
import org.inagg.api.launch.Launch;
import org.inagg.protocol.WorkerCounter;
import org.inagg.services.controller.ControllerClient;
import org.inagg.services.worker.SyntheticWorkload;
import org.inagg.services.worker.WorkerContext;
import org.inagg.services.worker.WorkerNode;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.capture.FrameHeaders;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code inagg worker}: one worker process all-reducing synthetic gradients through a switch over UDP. */
@Command(
    name = "worker",
    mixinStandardHelpOptions = true,
    description = "Join a job on a switch over UDP and all-reduce synthetic gradients (or run another --collective "
        + "with an --op); every worker of the job must run with the same --elements, --iterations, --seed, "
        + "--collective and --op. Checks the result against a double-precision sum (or an exact reference). "
        + "Started by torchrun, mpirun or srun, it takes --worker-id and -w from their environment.")
public final class WorkerCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--switch", description = "The switch's UDP address, host:port (UDP transport; over DPDK the "
        + "switch is the first --peer).")
    private String switchAddress;

    @Option(names = "--controller", paramLabel = "URL",
        description = "The controller (e.g. http://ctl:7070; default: $INAGG_CONTROLLER): it gives the job id, worker id"
            + " and switch, and registers this worker's UDP source (over DPDK: --local-ip and --udp-port, the switch"
            + " still its first --peer; docs/controller.md); --switch and --job-id are then not needed.")
    private String controller;

    @Option(names = "--job-name", paramLabel = "NAME",
        description = "With a controller: the job's name, the same at every rank (default: the launcher's run id, "
            + "TORCHELASTIC_RUN_ID, OMPI_MCA_ess_base_jobid (mpirun) or SLURM_JOB_ID).")
    private String jobName;

    @Option(names = "--controller-wait-s", defaultValue = "60",
        description = "With a controller: how long to wait for every rank to register (default ${DEFAULT-VALUE}).")
    private long controllerWaitSeconds;

    @Option(names = "--bind", defaultValue = "0.0.0.0:0", description = "Local UDP address (default ${DEFAULT-VALUE}).")
    private String bind;

    @Option(names = "--job-id", defaultValue = "1", description = "Job id (default ${DEFAULT-VALUE}).")
    private int jobId;

    /** --worker-id, -w, --launcher: from the flags, else from torchrun's, mpirun's or srun's environment. */
    @Mixin
    private LaunchOptions launchOptions;

    @Option(names = {"-n", "--elements"}, defaultValue = "1048576", description = "Elements per tensor (default ${DEFAULT-VALUE}).")
    private int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "10", description = "All-reduces (default ${DEFAULT-VALUE}).")
    private int iterations;

    @Option(names = "--warmup", defaultValue = "0",
        description = "Untimed all-reduces before the timed ones, for the JIT (default ${DEFAULT-VALUE}).")
    private int warmup;

    @Option(names = "--dtype", defaultValue = "float32",
        description = "float32 (fixed point, checked against the documented error bound) or int32 (summed exactly, "
            + "wrapping) (default ${DEFAULT-VALUE}).")
    private String dtype;

    @Option(names = "--collective", defaultValue = "all-reduce",
        description = "all-reduce, reduce-scatter (each worker receives its 1/N part of the -n elements), all-gather "
            + "(each worker sends n/N elements, receives n) or broadcast (worker 0's n elements); anything but the "
            + "all-reduce sum is checked exactly against a reference (float sums against the fixed-point bound) "
            + "(default ${DEFAULT-VALUE}).")
    private String collectiveName;

    @Option(names = "--op", defaultValue = "sum",
        description = "Reduce op of an all-reduce or reduce-scatter: sum, min or max (default ${DEFAULT-VALUE}).")
    private String opName;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the synthetic gradients (default ${DEFAULT-VALUE}).")
    private long seed;

    @Option(names = "--max-lanes", defaultValue = "" + WorkerContext.MAX_LANES_DEFAULT,
        description = "Largest lanes per packet accepted from the switch (default ${DEFAULT-VALUE}: a 1500-byte MTU's).")
    private int maxLanes;

    @Option(names = "--retransmit-us", defaultValue = "2000", description = "Minimum retransmission timeout, us (default ${DEFAULT-VALUE}).")
    private long retransmitUs;

    @Option(names = "--peer-timeout-ms", defaultValue = "10000", description = "Fail after this long without progress (default ${DEFAULT-VALUE}).")
    private long peerTimeoutMs;

    @Option(names = "--loss", defaultValue = "0", description = "Fault rate injected on received packets (default ${DEFAULT-VALUE}).")
    private double loss;

    @Option(names = "--idle", defaultValue = org.inagg.transport.IdleStrategies.DEFAULT, description = "Idle strategy: "
        + org.inagg.transport.IdleStrategies.NAMES + "; spin is busy polling, for dedicated cores (default ${DEFAULT-VALUE}).")
    private String idle;

    @Option(names = "--no-progress", description = "Do not draw the progress bar.")
    private boolean noProgress;

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

    /** With --transport dpdk: EAL, pool and transport, opened by the worker's launch once its context is checked. */
    private DpdkNode dpdkNode;

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final Launch launch = launchOptions.resolve(System.getenv());
        final boolean dpdk = DpdkOptions.isDpdk(transportName);
        final String controllerUrl = controller != null ? controller : System.getenv(ControllerClient.ENV);
        // Checked (conclude) before DPDK starts: EAL takes ports and hugepages that an error after it would leave held.
        final WorkerContext context = new WorkerContext().jobId(jobId).workerId(launch.rank())
            .workers(launch.worldSize()).controller(controllerUrl).jobName(jobName != null ? jobName : launch.runId())
            .controllerWait(Duration.ofSeconds(controllerWaitSeconds))
            .elements(elements).iterations(iterations).warmup(warmup).dtype(dtype).collective(collectiveName)
            .op(opName).seed(seed).maxLanes(maxLanes)
            .retransmitTimeout(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(retransmitUs)))
            .peerTimeout(Duration.ofMillis(peerTimeoutMs)).loss(loss).idle(idle)
            .decorator(capture::wrap)
            .counters(name -> countersOptions.open("worker", name, 64 + TransportCounter.values().length, out),
                countersOptions::close)
            .log(line ->
            {
                out.println(line);
                out.flush();
            });
        if (dpdk)
        {
            context.transportOpener(maxMessage ->
            {
                dpdkNode = DpdkNode.open(dpdkOptions, "worker" + launch.rank(), maxMessage, 1, 1, out);
                if (!dpdkNode.awaitLinksUp(dpdkOptions.linkTimeoutMs))
                {
                    throw new IllegalStateException("DPDK link(s) " + dpdkOptions.ports + " not up within "
                        + dpdkOptions.linkTimeoutMs + " ms");
                }
                return new WorkerContext.OpenedTransport(dpdkNode.transport(), FrameHeaders.inPlace(),
                    dpdkNode.transport().localAddress());
            });
        }
        else
        {
            context.bind(Addresses.parse("--bind", bind));
        }
        if (controllerUrl == null && switchAddress != null)
        {
            context.switchAddress(Addresses.parse("--switch", switchAddress));
        }
        context.conclude();
        final WorkerNode node;
        try
        {
            node = WorkerNode.launch(context);
        }
        catch (final RuntimeException | InterruptedException ex)
        {
            capture.report(out);
            closeDpdk();
            throw ex;
        }
        final boolean correct;
        try
        {
            correct = run(node, launch, out);
        }
        finally
        {
            node.close(); // leaving the controller: the last rank to leave frees the job
            capture.report(out);
            closeDpdk();
        }
        return !correct ? 4 : dpdkNode != null && dpdkNode.leaked() ? 3 : 0;
    }

    /** The warm-up and the timed collectives; prints their rates and the check of the last result. */
    private boolean run(final WorkerNode node, final Launch launch, final PrintWriter out)
    {
        final AllReduceJob job = node.job();
        final SyntheticWorkload workload = SyntheticWorkload.of(node);
        out.printf("inagg worker %d/%d (rank from %s) of job %d joined switch %s (%d lanes/packet, %s%s)%n",
            node.workerId(), node.workers(), launch.source(), node.jobId(), node.describeSwitch(),
            job.elementsPerPacket(), dtype, workload.describe());
        node.transportNotes().forEach(note -> out.println("  " + note));
        final String fit = node.packetFitWarning();
        if (fit != null)
        {
            out.println("  warning: " + fit);
        }
        out.flush();
        for (int i = 0; i < warmup; i++)
        {
            workload.run(job);
        }
        // bench-peers --profile: this worker's timed all-reduces only, not its JIT's warm-up (docs/performance.md).
        final ProfileWindow profile = ProfileWindow.forRole("worker", System.err);
        profile.start();
        final long sentBefore = job.counter(WorkerCounter.PACKETS_SENT);
        final long bytesBefore = job.counter(WorkerCounter.PAYLOAD_BYTES_SENT);
        final long receivedBefore = job.counter(WorkerCounter.ELEMENTS_REDUCED);
        final long retransmittedBefore = job.counter(WorkerCounter.RETRANSMISSIONS);
        final ProgressBar progress = new ProgressBar(System.err, iterations, !noProgress);
        final Histogram latencyUs = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
        final long cpuStart = ProcessCpu.nanos();
        final long start = System.nanoTime();
        long previous = start;
        for (int i = 0; i < iterations; i++)
        {
            workload.run(job);
            final long now = System.nanoTime();
            latencyUs.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(now - previous)));
            previous = now;
            progress.update(i + 1, "");
        }
        final double seconds = (System.nanoTime() - start) / 1e9;
        final long cpuEnd = ProcessCpu.nanos();
        profile.stopAndWrite();
        final double p50Ms = latencyUs.getValueAtPercentile(50) / 1e3;
        out.printf("  %-22s %.3f s for %d all-reduces of %,d elements%n", "time", seconds, iterations, elements);
        out.printf("  %-22s min %.2f ms, p50 %.2f ms, max %.2f ms%n", "per all-reduce",
            latencyUs.getMinValue() / 1e3, p50Ms, latencyUs.getMaxValue() / 1e3);
        out.printf("  %-22s %.3e (at the p50 all-reduce: %.3e)%n", "elements/s", elements * (double)iterations / seconds,
            elements / (p50Ms / 1e3));
        final long sent = job.counter(WorkerCounter.PACKETS_SENT) - sentBefore;
        final long retransmitted = job.counter(WorkerCounter.RETRANSMISSIONS) - retransmittedBefore;
        out.printf("  %-22s %.3e%n", "packets/s", sent / seconds);
        out.printf("  %-22s %.3f Gb/s%n", "payload sent",
            (job.counter(WorkerCounter.PAYLOAD_BYTES_SENT) - bytesBefore) * 8 / seconds / 1e9);
        out.printf("  %-22s sent %.3f MB, received %.3f MB (lanes, per operation)%n", "payload per op",
            (job.counter(WorkerCounter.PAYLOAD_BYTES_SENT) - bytesBefore) / 1e6 / iterations,
            (job.counter(WorkerCounter.ELEMENTS_REDUCED) - receivedBefore) * (double)Integer.BYTES / 1e6 / iterations);
        out.printf("  %-22s %,d%n", "retransmissions", retransmitted);
        out.printf("  %-22s %,d (%.3f%% retransmitted)%n", "packets sent", sent,
            sent > 0 ? 100.0 * retransmitted / sent : 0.0);
        final String cpu = ProcessCpu.workerLine(cpuStart < 0 ? -1 : cpuEnd - cpuStart, iterations);
        if (cpu != null)
        {
            out.println(cpu);
        }
        final boolean correct = workload.check(job, out);
        out.flush();
        return correct;
    }

    private void closeDpdk()
    {
        if (dpdkNode != null)
        {
            dpdkNode.close(); // after the worker's agent closed the transport
        }
    }
}
