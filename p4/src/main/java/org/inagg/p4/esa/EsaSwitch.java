package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;

import org.agrona.concurrent.Agent;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.pipeline.AggregationNode;
import org.inagg.p4.pipeline.NodeCounters;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;

/**
 * A software switch whose aggregators form one pool shared by every job (ESA, or ATP for comparison), run as an Agrona
 * agent over any {@link Transport}. Each job has a parameter server ({@link ParameterServer}) that finishes what the
 * switch does not.
 * <p>
 * An AGGREGATE of block (job, sequence) goes to aggregator {@code i = index(job, sequence)} ({@link AggregatorPool})
 * and, in this order:
 * <ol>
 *   <li>a <b>retransmission</b> never allocates: if i holds its block, the partial sum is flushed to the server; the
 *       packet itself goes to the server, which merges it or answers it from the completed sum it keeps;</li>
 *   <li>i holds the packet's block: a fresh contribution is added (a duplicate is dropped); the W-th completes it;</li>
 *   <li>i's tombstone names the block (it was evicted from, or diverted at, i): to the server, so a block never has
 *       two partials in flight from one aggregator;</li>
 *   <li>i is free: the packet takes it;</li>
 *   <li>i holds another block: the packet takes it if {@link #preempts} says so, the holder's partial sum and bitmap
 *       going to the holder's server (PREEMPTED); otherwise the packet goes to its server as it is (ATP's collision
 *       fallback) and i's tombstone remembers its block.</li>
 * </ol>
 * On completion, ESA multicasts the sum, sends a copy to the server (for retransmissions) and frees i at once; ATP
 * sends the sum to the server and keeps i until the server's result comes back through the switch, which then
 * multicasts it. Exactness does not depend on the switch: the server counts each worker of a block once
 * (docs/esa.md).
 * <p>
 * The switch is an {@link AggregationNode} (drain, parse, job table, JOINs, admission) with the ESA strategy
 * ({@link EsaAggregation}). A worker that rejoins as a new process starts a new session of its job, as on the slot
 * switch: the job's aggregators are released, the old run's packets are refused as stale, and the server follows the
 * new session from the packets the switch forwards (docs/sessions.md).
 */
public final class EsaSwitch implements Agent, MessageHandler
{
    private final Transport transport;
    private final EsaSwitchSettings settings;
    private final NodeCounters<EsaCounter> counters;
    private final AggregationNode<EsaJob> node;
    private final EsaAggregation aggregation;

    public EsaSwitch(final Transport transport, final CounterRegistry registry, final EsaSwitchSettings settings)
    {
        this.transport = transport;
        this.settings = settings;
        this.counters = new NodeCounters<>(registry, EsaCounter.class, "esa switch");
        this.node = new AggregationNode<>("inagg-esa-switch", EsaSwitch.class, "esa switch", transport, counters,
            settings.receiveBurst());
        this.aggregation = new EsaAggregation(node, counters, settings);
        node.strategy(aggregation);
    }

    /**
     * The preemption rule. A packet of a newer block of the holder's own job always takes the aggregator: the older
     * block is complete and leaked (a late duplicate re-allocated it) or stuck, and its sum is exact at the server
     * either way. Otherwise only ESA preempts, and only for a strictly higher priority: equal priorities never preempt
     * each other, so two jobs cannot thrash an aggregator.
     */
    public static boolean preempts(
        final AllocationMode mode, final int jobId, final int sequence, final int priority,
        final int holderJob, final int holderSequence, final int holderPriority)
    {
        if (jobId == holderJob)
        {
            return sequence - holderSequence > 0;
        }
        return mode == AllocationMode.PREEMPTIVE && priority > holderPriority;
    }

    /**
     * Shortest-remaining-first priority: 255 for no work left, one step down per eighth of a doubling of the
     * remaining KiB ({@code 255 - floor(8 * log2(1 + KiB))}, the logarithm approximated linearly between powers of
     * two), at least 1. Monotone: less work left never gives a lower priority.
     */
    public static int srfPriority(final long remainingBytes)
    {
        final long x = 1 + Math.max(0, remainingBytes) / 1024;
        final int e = 63 - Long.numberOfLeadingZeros(x);
        final int mantissa = (int)(e >= 3 ? (x >>> (e - 3)) & 7 : (x << (3 - e)) & 7);
        return Math.max(1, 255 - (8 * e + mantissa));
    }

    /**
     * Installs (or replaces) a job; applied by the agent before the next message. Any thread.
     *
     * @throws IllegalArgumentException if the job does not fit the pool or the transport.
     */
    public void addJob(final EsaJobConfig config)
    {
        if (config.lanesPerPacket() > settings.lanesPerAggregator() || config.workers() > settings.maxWorkers())
        {
            throw new IllegalArgumentException("job " + config.jobId() + ": " + config.workers() + " workers of "
                + config.lanesPerPacket() + " lanes do not fit aggregators of " + settings.lanesPerAggregator()
                + " lanes and " + settings.maxWorkers() + " workers");
        }
        if (EsaWire.maxPartialLength(config.lanesPerPacket(), config.workers()) > transport.maxMessageLength())
        {
            throw new IllegalArgumentException("job " + config.jobId() + ": partials of "
                + EsaWire.maxPartialLength(config.lanesPerPacket(), config.workers())
                + " bytes do not fit the switch transport (" + transport.maxMessageLength() + ")");
        }
        node.install(new EsaJob(config));
    }

    /** Removes a job and frees its aggregators. Any thread. */
    public void removeJob(final int jobId)
    {
        node.remove(jobId);
    }

    /** Control plane: the job's remaining bytes, from which shortest-remaining-first priorities follow. Any thread. */
    public void setRemainingBytes(final int jobId, final long bytes)
    {
        node.control(() -> aggregation.remainingBytes(jobId, bytes));
    }

    public long counter(final EsaCounter counter)
    {
        return counters.get(counter);
    }

    /** The job's current table priority (static, or SRF); agent thread or quiescent. */
    public int tablePriority(final int jobId)
    {
        return aggregation.tablePriority(jobId);
    }

    /** The current session of an installed job (-1 if none): 0, or the last a rejoin started. */
    public int session(final int jobId)
    {
        final EsaJob job = node.job(jobId);
        return job == null ? -1 : job.membership().session();
    }

    @Override
    public String roleName()
    {
        return node.roleName();
    }

    @Override
    public int doWork()
    {
        return node.doWork();
    }

    /** Applies queued job changes; the agent does this each cycle, a test or harness may call it directly. */
    public int applyControl()
    {
        return node.applyControl();
    }

    @Override
    public void onClose()
    {
        node.onClose();
    }

    @Override
    public void onMessage(final MemorySegment m, final long o, final int length, final int peer)
    {
        node.onMessage(m, o, length, peer);
    }
}
