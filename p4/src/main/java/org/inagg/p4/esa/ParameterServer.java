package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;

import org.agrona.concurrent.Agent;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.pipeline.AggregationNode;
import org.inagg.p4.pipeline.NodeCounters;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;

/**
 * The host that finishes what the switch could not aggregate, as an Agrona agent over any {@link Transport}.
 * <p>
 * Per block (job, sequence) it keeps a sum and the bitmap of the workers in it. A raw fragment (a worker's AGGREGATE
 * the switch forwarded) adds its worker if that bit is clear; a PARTIAL ({@link EsaWire}) adds its sum if its bitmap
 * is disjoint from the block's, is dropped if it is contained in it (a duplicate), and is dropped as well if it
 * overlaps it only in part: its sum cannot be split, and the workers it would have added are still waiting for the
 * result, so they retransmit, and a retransmission always reaches the server raw. Hence no contribution is ever
 * counted twice.
 * When the bitmap holds all W workers the block is complete: its result, in the switch's RESULT format, goes to every
 * worker (ESA) or to the switch (ATP, which frees its aggregator and multicasts it).
 * <p>
 * Completed sums (its own and the copies of the switch's) are kept to answer retransmissions: a fragment of a completed
 * block is answered with the result, to its worker alone, and never merged. Blocks live in a per-job table indexed,
 * as the switch's slot pool, by slot and shadow copy: a block is forgotten only when a newer round takes its slot
 * copy, and a worker sends that round only after every worker had the block's result (docs/protocol.md, "Slots,
 * rounds and shadow copies"). Indexing by sequence instead is unsafe at any table length: one slot waiting for a lost
 * packet does not stop the others, so the sequences in flight span up to a whole tensor. Entries are allocated on
 * first use and then reused (the table grows to twice the highest slot used), so a warm server allocates nothing per
 * message.
 * <p>
 * The same server finishes two-level aggregation ({@code org.inagg.p4.softswitch.UpstreamAggregation}): switches send
 * the sums of their own workers as PARTIALs (reason {@link EsaWire#REASON_SUBTREE}), workers with no switch in front of
 * them send to the server directly and join here ({@link ServerJobConfig#answersJoins()}). A switch's PARTIAL with
 * {@link EsaWire#FLAG_RESULTS_DOWN} asks for its workers' result once: the block's result goes to that switch, which
 * multicasts it to them (results down the tree), and to every other worker directly; a retransmission of a complete
 * block is always answered directly, to its worker.
 * <p>
 * The server is an {@link AggregationNode} (drain, parse, job table, JOINs) with the block-merging strategy
 * ({@link ServerAggregation}); it follows its jobs' sessions as that class describes, so a job whose workers are
 * restarted with the same job id starts afresh here too.
 */
public final class ParameterServer implements Agent, MessageHandler
{
    private final int retainedResults;
    private final NodeCounters<ServerCounter> counters;
    private final AggregationNode<ServerJob> node;

    /**
     * @param retainedResults initial block table entries per job (1..2^24, rounded up to a power of two, at most
     *                        {@code 2 * MAX_SLOTS}): one per slot copy the job uses; the table grows beyond it on first
     *                        use of a higher slot, so this only avoids that growth.
     */
    public ParameterServer(final Transport transport, final CounterRegistry registry, final int receiveBurst,
        final int retainedResults)
    {
        if (retainedResults < 1 || retainedResults > 1 << 24)
        {
            throw new IllegalArgumentException("retained results must be in 1..2^24, got " + retainedResults);
        }
        // Initial table entries per job; more than one per slot copy is never used.
        this.retainedResults = Math.min(2 * InaggHeader.MAX_SLOTS,
            1 << (32 - Integer.numberOfLeadingZeros(retainedResults - 1)));
        this.counters = new NodeCounters<>(registry, ServerCounter.class, "parameter server");
        this.node = new AggregationNode<>("inagg-parameter-server", ParameterServer.class, "parameter server",
            transport, counters, receiveBurst);
        node.strategy(new ServerAggregation(node, counters));
    }

    /** Installs (or replaces, forgetting its blocks) a job; applied before the next message. Any thread. */
    public void addJob(final ServerJobConfig config)
    {
        node.install(new ServerJob(config, retainedResults));
    }

    public long counter(final ServerCounter counter)
    {
        return counters.get(counter);
    }

    /** Blocks of the job still being merged; agent thread or quiescent. */
    public int openBlocks(final int jobId)
    {
        final ServerJob job = node.job(jobId);
        return job == null ? 0 : job.open;
    }

    /** The current session of an installed job (-1 if none): 0, or the last a rejoin here or upstream started. */
    public int session(final int jobId)
    {
        final ServerJob job = node.job(jobId);
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
