package org.inagg.services.worker;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

import org.inagg.agent.CounterRegistry;
import org.inagg.api.JobContext;
import org.inagg.services.cli.CliNumbers;
import org.inagg.services.cli.TensorMemory;
import org.inagg.transport.IdleStrategies;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.wire.InaggHeader;

/**
 * The settings of one worker process ({@code inagg worker}): who it is in its job (or the controller that tells it),
 * where its switch is (a UDP address, or a transport it is given, DPDK), the protocol's timeouts, and the synthetic
 * tensors it all-reduces ({@link SyntheticWorkload}). {@link #conclude()} checks the whole once, before any socket,
 * controller call or DPDK's EAL is taken.
 */
public final class WorkerContext
{
    /** Default local UDP address: any interface, a port of the kernel's choosing. */
    public static final InetSocketAddress BIND_DEFAULT = new InetSocketAddress("0.0.0.0", 0);
    /** Default elements per tensor. */
    public static final int ELEMENTS_DEFAULT = 1 << 20;
    /** Largest lanes per packet accepted by default: a whole 1500-byte MTU's worth, and a little over. */
    public static final int MAX_LANES_DEFAULT = InaggHeader.MAX_ELEMENTS_FOR_1500_MTU;
    /** Most lanes one UDP datagram holds. */
    public static final int MAX_LANES_LIMIT = (65_507 - InaggHeader.LENGTH) / Integer.BYTES;
    /** How long a controller waits by default for every rank to register. */
    public static final Duration CONTROLLER_WAIT_DEFAULT = Duration.ofSeconds(60);
    /** The tensor element types it runs. */
    public static final String FLOAT32 = "float32";
    public static final String INT32 = "int32";

    /** Opens the transport of a worker that does not run on a UDP socket of its own (DPDK). */
    @FunctionalInterface
    public interface TransportOpener
    {
        /** @param maxMessageLength the largest message from the switch ({@link #maxLanes} lanes). */
        OpenedTransport open(int maxMessageLength) throws InterruptedException;
    }

    /**
     * A transport a {@link TransportOpener} opened, its switch its peer 0: what the worker sends through (closed by
     * its agent), how a capture frames its messages, and the source a controller registers for this rank (over DPDK,
     * the IPv4 source and UDP port of its frames).
     */
    public record OpenedTransport(Transport transport, FrameHeaders headers, InetSocketAddress source)
    {
    }

    private int jobId = 1;
    private int workerId;
    private int workers = 1;
    private InetSocketAddress bind = BIND_DEFAULT;
    private InetSocketAddress switchAddress;
    private String controller;
    private String jobName;
    private Duration controllerWait = CONTROLLER_WAIT_DEFAULT;
    private int elements = ELEMENTS_DEFAULT;
    private int iterations = 10;
    private int warmup;
    private String dtype = FLOAT32;
    private String collective = "all-reduce";
    private String op = "sum";
    private long seed = 1;
    private int maxLanes = MAX_LANES_DEFAULT;
    private Duration retransmitTimeout = Duration.ofNanos(JobContext.RETRANSMIT_TIMEOUT_DEFAULT_US * 1_000);
    private Duration peerTimeout = Duration.ofMillis(JobContext.PEER_TIMEOUT_DEFAULT_MS);
    private double loss;
    private String idle = IdleStrategies.DEFAULT;
    private TransportOpener transportOpener;
    private BiFunction<Transport, FrameHeaders, Transport> decorator = (transport, headers) -> transport;
    private Function<String, CounterRegistry> counters =
        name -> new CounterRegistry(64 + TransportCounter.values().length);
    private Runnable countersClose = () -> { };
    private Consumer<String> log = line -> System.getLogger(WorkerNode.class.getName())
        .log(System.Logger.Level.INFO, line);

    /** The job's id (default 1); a controller's assignment replaces it. */
    public WorkerContext jobId(final int jobId)
    {
        this.jobId = jobId;
        return this;
    }

    /** This worker's id in the job, 0..workers-1 (its rank); a controller's assignment may replace it. */
    public WorkerContext workerId(final int workerId)
    {
        this.workerId = workerId;
        return this;
    }

    /** The job's workers (the world size). */
    public WorkerContext workers(final int workers)
    {
        this.workers = workers;
        return this;
    }

    /** Local UDP address (default any interface, any port); unused with a {@link #transportOpener}. */
    public WorkerContext bind(final InetSocketAddress bind)
    {
        this.bind = bind;
        return this;
    }

    /** The switch's UDP address; unused with a {@link #controller}, which gives it. */
    public WorkerContext switchAddress(final InetSocketAddress switchAddress)
    {
        this.switchAddress = switchAddress;
        return this;
    }

    /**
     * The controller's URL (null: a static job): it gives the job id, worker id and switch, and registers this
     * worker's source (docs/controller.md).
     */
    public WorkerContext controller(final String controller)
    {
        this.controller = controller;
        return this;
    }

    /** With a controller: the job's name, the same at every rank. */
    public WorkerContext jobName(final String jobName)
    {
        this.jobName = jobName;
        return this;
    }

    /** With a controller: how long to wait for every rank to register. */
    public WorkerContext controllerWait(final Duration controllerWait)
    {
        this.controllerWait = controllerWait;
        return this;
    }

    /** Elements per tensor. */
    public WorkerContext elements(final int elements)
    {
        this.elements = elements;
        return this;
    }

    /** Timed collectives. */
    public WorkerContext iterations(final int iterations)
    {
        this.iterations = iterations;
        return this;
    }

    /** Untimed collectives before the timed ones, for the JIT. */
    public WorkerContext warmup(final int warmup)
    {
        this.warmup = warmup;
        return this;
    }

    /** {@link #FLOAT32} (fixed point, within the documented bound) or {@link #INT32} (exact, wrapping). */
    public WorkerContext dtype(final String dtype)
    {
        this.dtype = dtype;
        return this;
    }

    /** all-reduce, reduce-scatter, all-gather or broadcast. */
    public WorkerContext collective(final String collective)
    {
        this.collective = collective;
        return this;
    }

    /** The reduce op of an all-reduce or reduce-scatter: sum, min or max. */
    public WorkerContext op(final String op)
    {
        this.op = op;
        return this;
    }

    /** Seed of the synthetic tensors (and of the injected faults). */
    public WorkerContext seed(final long seed)
    {
        this.seed = seed;
        return this;
    }

    /** Largest lanes per packet accepted from the switch; sizes the transport's messages. */
    public WorkerContext maxLanes(final int maxLanes)
    {
        this.maxLanes = maxLanes;
        return this;
    }

    /** Minimum retransmission timeout. */
    public WorkerContext retransmitTimeout(final Duration retransmitTimeout)
    {
        this.retransmitTimeout = retransmitTimeout;
        return this;
    }

    /** Fail after this long without progress. */
    public WorkerContext peerTimeout(final Duration peerTimeout)
    {
        this.peerTimeout = peerTimeout;
        return this;
    }

    /** Fault rate injected on received packets (each of drop, duplicate and reorder), 0 for none. */
    public WorkerContext loss(final double loss)
    {
        this.loss = loss;
        return this;
    }

    /** Idle strategy by name ({@link IdleStrategies#NAMES}). */
    public WorkerContext idle(final String idle)
    {
        this.idle = idle;
        return this;
    }

    /** Runs the worker on the transport this opens (DPDK) instead of a UDP socket on {@link #bind}; null: UDP. */
    public WorkerContext transportOpener(final TransportOpener transportOpener)
    {
        this.transportOpener = transportOpener;
        return this;
    }

    /** What the worker sends and receives through, given its transport and its frames' headers (a capture). */
    public WorkerContext decorator(final BiFunction<Transport, FrameHeaders, Transport> decorator)
    {
        this.decorator = decorator;
        return this;
    }

    /**
     * Where its counters go (with room for its transport's), given what it serves ("worker W/N of job J via SWITCH"),
     * and what closes them when the node closes (a counters file).
     */
    public WorkerContext counters(final Function<String, CounterRegistry> counters, final Runnable close)
    {
        this.counters = counters;
        this.countersClose = close;
        return this;
    }

    /** Where the launch says what the controller assigned (default: {@link System.Logger} at INFO). */
    public WorkerContext log(final Consumer<String> log)
    {
        this.log = log;
        return this;
    }

    /**
     * Checks the settings; every launch checks them again, so a setter called after a check is checked too.
     *
     * @throws IllegalArgumentException naming the option that is missing or does not fit, and its value.
     */
    public WorkerContext conclude()
    {
        CliNumbers.require("-n/--elements", elements, 1, Integer.MAX_VALUE - 8);
        CliNumbers.require("-i/--iterations", iterations, 1, Integer.MAX_VALUE);
        CliNumbers.require("--warmup", warmup, 0, Integer.MAX_VALUE);
        requireAtLeastOne("--controller-wait-s", controllerWait, ChronoUnit.SECONDS);
        CliNumbers.require("--max-lanes", maxLanes, 1, MAX_LANES_LIMIT);
        requireAtLeastOne("--retransmit-us", retransmitTimeout, ChronoUnit.MICROS);
        requireAtLeastOne("--peer-timeout-ms", peerTimeout, ChronoUnit.MILLIS);
        CliNumbers.requireLoss(loss);
        final boolean ints = ints();
        TensorMemory.require("-n/--elements", elements, Float.BYTES, ints ? 3 : 4, ints
            ? "source, result and the reference sum" : "source, result and the reference sum in doubles, as two");
        CliNumbers.require("-w/--workers", workers, 1, Integer.MAX_VALUE);
        CliNumbers.require("--worker-id", workerId, 0, workers - 1L);
        if (controller != null && jobName == null)
        {
            throw new IllegalArgumentException("which job? With a controller, pass --job-name NAME (the same at every "
                + "rank) or start under a launcher that sets a run id (TORCHELASTIC_RUN_ID, OMPI_MCA_ess_base_jobid, "
                + "SLURM_JOB_ID)");
        }
        if (transportOpener == null && controller == null && switchAddress == null)
        {
            throw new IllegalArgumentException("--switch host:port (or --controller URL, or INAGG_CONTROLLER) is needed"
                + " with the UDP transport");
        }
        Objects.requireNonNull(bind, "bind");
        IdleStrategies.byName(idle);
        CollectiveCheck.validate(collective, op, elements, workers);
        return this;
    }

    /**
     * A duration option of at least one {@code unit}; the value is shown in the option's unit when it is a whole
     * number of them, else as given (an API caller's 500 ms for a seconds option is not "got 0").
     */
    private static void requireAtLeastOne(final String option, final Duration value, final ChronoUnit unit)
    {
        final Duration one = unit.getDuration();
        if (value.compareTo(one) < 0)
        {
            final long whole = value.dividedBy(one);
            throw new IllegalArgumentException(option + " must be at least 1, got "
                + (one.multipliedBy(whole).equals(value) ? Long.toString(whole) : value.toString()));
        }
    }

    /** Whether the tensors are int32 (else float32). */
    public boolean ints()
    {
        return switch (dtype)
        {
            case FLOAT32 -> false;
            case INT32 -> true;
            default -> throw new IllegalArgumentException("--dtype must be float32 or int32, not " + dtype);
        };
    }

    public int jobId()
    {
        return jobId;
    }

    public int workerId()
    {
        return workerId;
    }

    public int workers()
    {
        return workers;
    }

    public InetSocketAddress bind()
    {
        return bind;
    }

    public InetSocketAddress switchAddress()
    {
        return switchAddress;
    }

    public String controller()
    {
        return controller;
    }

    public String jobName()
    {
        return jobName;
    }

    public Duration controllerWait()
    {
        return controllerWait;
    }

    public int elements()
    {
        return elements;
    }

    public int iterations()
    {
        return iterations;
    }

    public int warmup()
    {
        return warmup;
    }

    public String dtype()
    {
        return dtype;
    }

    public String collective()
    {
        return collective;
    }

    public String op()
    {
        return op;
    }

    public long seed()
    {
        return seed;
    }

    public int maxLanes()
    {
        return maxLanes;
    }

    public Duration retransmitTimeout()
    {
        return retransmitTimeout;
    }

    public Duration peerTimeout()
    {
        return peerTimeout;
    }

    public double loss()
    {
        return loss;
    }

    public String idle()
    {
        return idle;
    }

    TransportOpener transportOpener()
    {
        return transportOpener;
    }

    BiFunction<Transport, FrameHeaders, Transport> decorator()
    {
        return decorator;
    }

    CounterRegistry openCounters(final String name)
    {
        return counters.apply(name);
    }

    void closeCounters()
    {
        countersClose.run();
    }

    void log(final String line)
    {
        log.accept(line);
    }
}
