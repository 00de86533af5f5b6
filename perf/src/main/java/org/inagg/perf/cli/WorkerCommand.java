package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

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
    description = "Join a job on a switch over UDP and all-reduce synthetic gradients; every worker of the job must "
        + "run with the same --elements, --iterations and --seed. Checks the result against a double-precision sum. "
        + "Started by torchrun, mpirun or srun, it takes --worker-id and -w from their environment.")
final class WorkerCommand implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    @Option(names = "--switch", description = "The switch's UDP address, host:port (UDP transport; over DPDK the "
        + "switch is the first --peer).")
    private String switchAddress;

    @Option(names = "--bind", defaultValue = "0.0.0.0:0", description = "Local UDP address (default ${DEFAULT-VALUE}).")
    private String bind;

    @Option(names = "--job-id", defaultValue = "1", description = "Job id (default ${DEFAULT-VALUE}).")
    private int jobId;

    /** --worker-id, -w, --launcher: from the flags, else from torchrun's, mpirun's or srun's environment. */
    @Mixin
    private LaunchOptions launchOptions;

    private int workerId;

    private int workers;

    @Option(names = {"-n", "--elements"}, defaultValue = "1048576", description = "Elements per tensor (default ${DEFAULT-VALUE}).")
    private int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "10", description = "All-reduces (default ${DEFAULT-VALUE}).")
    private int iterations;

    @Option(names = "--dtype", defaultValue = "float32",
        description = "float32 (fixed point, checked against the documented error bound) or int32 (summed exactly, "
            + "wrapping) (default ${DEFAULT-VALUE}).")
    private String dtype;

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

    @Option(names = "--idle", defaultValue = "backoff", description = "Idle strategy (default ${DEFAULT-VALUE}).")
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
        final Launch launch = launchOptions.resolve(System.getenv());
        workerId = launch.rank();
        workers = launch.worldSize();
        final boolean dpdk = DpdkOptions.isDpdk(transportName);
        if (!dpdk && switchAddress == null)
        {
            throw new IllegalArgumentException("--switch host:port is needed with the UDP transport");
        }
        final DpdkNode node = dpdk ? DpdkNode.open(dpdkOptions, "worker" + workerId,
            InaggHeader.messageLength(maxLanes), 1, out) : null;
        if (node != null && !node.awaitLinksUp(dpdkOptions.linkTimeoutMs))
        {
            node.close();
            throw new IllegalStateException("DPDK link(s) " + dpdkOptions.ports + " not up within "
                + dpdkOptions.linkTimeoutMs + " ms");
        }
        final Transport transport = dpdk ? node.transport() : UdpTransport.open(Addresses.parse("--bind", bind),
            List.of(Addresses.parse("--switch", switchAddress)), 1, InaggHeader.messageLength(maxLanes), 64);
        final JobContext context = new JobContext().jobId(jobId).workerId(workerId).workers(workers)
            .transport(FaultInjectingTransport.wrap(capture.wrap(transport,
                    dpdk ? FrameHeaders.inPlace() : FrameHeaders.udp((UdpTransport)transport)),
                loss > 0 ? FaultConfig.lossy(loss, seed * 31 + workerId) : FaultConfig.NONE))
            .retransmitTimeout(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(retransmitUs)))
            .peerTimeout(Duration.ofMillis(peerTimeoutMs))
            .idleStrategy(idle)
            .counters(countersOptions.open("worker", "worker " + workerId + "/" + workers + " of job " + jobId + " via "
                + transport.describePeer(0), 64, out));
        final boolean ints = switch (dtype)
        {
            case "float32" -> false;
            case "int32" -> true;
            default -> throw new IllegalArgumentException("--dtype must be float32 or int32, not " + dtype);
        };
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
            out.printf("inagg worker %d/%d (rank from %s) of job %d joined switch %s (%d lanes/packet, %s)%n",
                workerId, workers, launch.source(), jobId, transport.describePeer(0), job.elementsPerPacket(), dtype);
            out.flush();
            final ProgressBar progress = new ProgressBar(System.err, iterations, !noProgress);
            final long start = System.nanoTime();
            for (int i = 0; i < iterations; i++)
            {
                if (ints)
                {
                    job.allReduce(intSource, intResult);
                }
                else
                {
                    job.allReduce(source, result);
                }
                progress.update(i + 1, "");
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            out.printf("  %-22s %.3f s for %d all-reduces of %,d elements%n", "time", seconds, iterations, elements);
            out.printf("  %-22s %.3e%n", "elements/s", elements * (double)iterations / seconds);
            out.printf("  %-22s %.3e%n", "packets/s", job.counter(WorkerCounter.PACKETS_SENT) / seconds);
            out.printf("  %-22s %.3f Gb/s%n", "payload sent", job.counter(WorkerCounter.PAYLOAD_BYTES_SENT) * 8 / seconds / 1e9);
            out.printf("  %-22s %,d%n", "retransmissions", job.counter(WorkerCounter.RETRANSMISSIONS));
            if (ints)
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
