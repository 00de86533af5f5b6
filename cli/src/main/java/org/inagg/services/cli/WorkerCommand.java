package org.inagg.services.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.api.launch.Launch;
import org.inagg.protocol.WorkerCounter;
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

    private int workerId;

    /** The JOIN credential the controller's answer gives this rank; none without a controller (a static job). */
    private long joinCredential = InaggHeader.NO_CREDENTIAL;

    private int workers;

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

    @Option(names = "--max-lanes", defaultValue = "363", description = "Largest lanes per packet accepted from the switch (default ${DEFAULT-VALUE}).")
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

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        CliNumbers.require("-n/--elements", elements, 1, Integer.MAX_VALUE - 8);
        CliNumbers.require("-i/--iterations", iterations, 1, Integer.MAX_VALUE);
        CliNumbers.require("--warmup", warmup, 0, Integer.MAX_VALUE);
        CliNumbers.require("--controller-wait-s", controllerWaitSeconds, 1, Long.MAX_VALUE);
        CliNumbers.require("--max-lanes", maxLanes, 1, (65_507 - InaggHeader.LENGTH) / Integer.BYTES); // one UDP datagram
        CliNumbers.require("--retransmit-us", retransmitUs, 1, Long.MAX_VALUE);
        CliNumbers.require("--peer-timeout-ms", peerTimeoutMs, 1, Long.MAX_VALUE);
        CliNumbers.requireLoss(loss);
        final boolean intTensors = "int32".equals(dtype);
        TensorMemory.require("-n/--elements", elements, Float.BYTES, intTensors ? 3 : 4, intTensors
            ? "source, result and the reference sum" : "source, result and the reference sum in doubles, as two");
        final Launch launch = launchOptions.resolve(System.getenv());
        workerId = launch.rank();
        workers = launch.worldSize();
        final boolean dpdk = DpdkOptions.isDpdk(transportName);
        final String controllerUrl = controller != null ? controller
            : System.getenv(org.inagg.services.controller.ControllerClient.ENV);
        final org.inagg.services.controller.ControllerClient controllerClient = controllerUrl == null ? null
            : new org.inagg.services.controller.ControllerClient(controllerUrl, Duration.ofSeconds(5));
        final String jobNameOrRunId = jobName != null ? jobName : launch.runId();
        if (controllerClient != null && jobNameOrRunId == null)
        {
            throw new IllegalArgumentException("which job? With a controller, pass --job-name NAME (the same at every "
                + "rank) or start under a launcher that sets a run id (TORCHELASTIC_RUN_ID, OMPI_MCA_ess_base_jobid, "
                + "SLURM_JOB_ID)");
        }
        final java.net.InetSocketAddress switchSocket = controllerClient != null ? controllerClient.switchAddress()
            : switchAddress == null ? null : Addresses.parse("--switch", switchAddress);
        if (!dpdk && switchSocket == null)
        {
            throw new IllegalArgumentException("--switch host:port (or --controller URL, or INAGG_CONTROLLER) is needed"
                + " with the UDP transport");
        }
        final DpdkNode node = dpdk ? DpdkNode.open(dpdkOptions, "worker" + workerId,
            InaggHeader.messageLength(maxLanes), 1, 1, out) : null;
        if (node != null && !node.awaitLinksUp(dpdkOptions.linkTimeoutMs))
        {
            node.close();
            throw new IllegalStateException("DPDK link(s) " + dpdkOptions.ports + " not up within "
                + dpdkOptions.linkTimeoutMs + " ms");
        }
        final Transport transport = dpdk ? node.transport() : UdpTransport.open(Addresses.parse("--bind", bind),
            List.of(switchSocket), 1, InaggHeader.messageLength(maxLanes), 64);
        if (controllerClient != null)
        {
            // The transport is open first: its address is the source the switch will admit for this rank (over DPDK,
            // the IPv4 source and UDP port of its frames; the switch pins the MAC of its first accepted JOIN).
            final java.net.InetSocketAddress source;
            if (dpdk)
            {
                source = node.transport().localAddress();
            }
            else
            {
                final UdpTransport udp = (UdpTransport)transport;
                source = new java.net.InetSocketAddress(org.inagg.services.controller.ControllerClient.sourceToward(
                    udp.localAddress(), switchSocket), udp.localAddress().getPort());
            }
            final org.inagg.services.controller.Assignment assignment;
            try
            {
                assignment = controllerClient.register(jobNameOrRunId, workerId, workers, dtype, elements, source, 0,
                    Duration.ofSeconds(controllerWaitSeconds));
            }
            catch (final RuntimeException ex)
            {
                if (node != null)
                {
                    node.close();
                }
                else
                {
                    transport.close();
                }
                controllerClient.close();
                throw ex;
            }
            jobId = assignment.jobId();
            workerId = assignment.workerId();
            joinCredential = assignment.joinCredential();
            out.printf("inagg worker: job '%s' is job %d, session %d, on switch %s (controller %s)%n",
                assignment.name(), jobId, assignment.session(), switchSocket, controllerClient.url());
        }
        final JobContext context = new JobContext().jobId(jobId).workerId(workerId).workers(workers)
            .joinCredential(joinCredential)
            .transport(FaultInjectingTransport.wrap(capture.wrap(transport,
                    dpdk ? FrameHeaders.inPlace() : FrameHeaders.udp((UdpTransport)transport)),
                loss > 0 ? FaultConfig.lossy(loss, seed * 31 + workerId) : FaultConfig.NONE))
            .retransmitTimeout(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(retransmitUs)))
            .peerTimeout(Duration.ofMillis(peerTimeoutMs))
            .idleStrategy(idle)
            .counters(countersOptions.open("worker", "worker " + workerId + "/" + workers + " of job " + jobId + " via "
                + transport.describePeer(0), 64, out, transport, jobId, workerId));
        final boolean ints = switch (dtype)
        {
            case "float32" -> false;
            case "int32" -> true;
            default -> throw new IllegalArgumentException("--dtype must be float32 or int32, not " + dtype);
        };
        final CollectiveCheck collective = CollectiveCheck.of(collectiveName, opName, ints, elements, workers, workerId,
            seed);
        final float[] source = ints ? null : new float[elements];
        final float[] result = ints ? null : new float[elements];
        final int[] intSource = ints ? new int[elements] : null;
        final int[] intResult = ints ? new int[elements] : null;
        if (ints)
        {
            SyntheticGradients.fillInts(intSource, workerId, 0, seed);
        }
        else
        {
            SyntheticGradients.fill(source, workerId, 0, seed);
        }
        boolean correct;
        try (AllReduceJob job = AllReduceJob.open(context))
        {
            out.printf("inagg worker %d/%d (rank from %s) of job %d joined switch %s (%d lanes/packet, %s%s)%n",
                workerId, workers, launch.source(), jobId, transport.describePeer(0), job.elementsPerPacket(), dtype,
                collective == null ? "" : ", " + collective.describe());
            if (transport instanceof UdpTransport udp)
            {
                out.println("  " + udp.describeIo());
                out.println("  " + udp.describeBuffers());
            }
            out.flush();
            for (int i = 0; i < warmup; i++)
            {
                if (collective != null)
                {
                    collective.run(job);
                }
                else if (ints)
                {
                    job.allReduce(intSource, intResult);
                }
                else
                {
                    job.allReduce(source, result);
                }
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
            final long start = System.nanoTime();
            long previous = start;
            for (int i = 0; i < iterations; i++)
            {
                if (collective != null)
                {
                    collective.run(job);
                }
                else if (ints)
                {
                    job.allReduce(intSource, intResult);
                }
                else
                {
                    job.allReduce(source, result);
                }
                final long now = System.nanoTime();
                latencyUs.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(now - previous)));
                previous = now;
                progress.update(i + 1, "");
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
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
            if (collective != null)
            {
                correct = collective.check(job, out);
            }
            else if (ints)
            {
                correct = java.util.Arrays.equals(intResult, SyntheticGradients.referenceInts(elements, workers, 0, seed));
                out.printf("  %-22s %s%n", "exact int32 sum", correct ? "yes" : "NO");
                out.printf("  %-22s %08x%n", "result crc32", SyntheticGradients.crc32(intResult));
            }
            else
            {
                final double[] error = SyntheticGradients.maxError(result,
                    SyntheticGradients.reference(elements, workers, 0, seed));
                final long outside = SyntheticGradients.outOfBound(result, workers, 0, seed, job.elementsPerPacket());
                correct = outside == 0;
                out.printf("  %-22s abs %.3e, rel %.3e (vs double-precision sum)%n", "max error", error[0], error[1]);
                out.printf("  %-22s %s%n", "within bound", correct ? "yes (docs/protocol.md)"
                    : "NO: " + outside + " elements outside the fixed-point bound");
                out.printf("  %-22s %08x%n", "result crc32", SyntheticGradients.crc32(result));
            }
            out.flush();
        }
        finally
        {
            if (controllerClient != null)
            {
                controllerClient.close(); // the last rank to leave frees the job
            }
            countersOptions.close();
            capture.report(out);
            if (node != null)
            {
                node.close(); // after the job's agent closed the transport
            }
        }
        return !correct ? 4 : node != null && node.leaked() ? 3 : 0;
    }
}
