package org.inagg.p4.esa;

import org.inagg.agent.CounterDescriptor;

/**
 * Counters of the ESA switch: fixed type ids (3xx), one per outcome; the outcomes every node counts under the names of
 * {@code org.inagg.p4.pipeline.NodeCounter}.
 */
public enum EsaCounter implements CounterDescriptor
{
    RECEIVED(301, "messages received"),
    CONTRIBUTIONS(302, "contributions aggregated in the switch"),
    ALLOCATIONS(303, "aggregators allocated"),
    COMPLETIONS(304, "blocks completed in the switch"),
    RESULTS_SENT(305, "results sent to workers (copies)"),
    PREEMPTIONS(306, "partials preempted to the server"),
    STALE_EVICTIONS(307, "partials evicted by a newer block of the same job"),
    FLUSHES(308, "partials flushed by a retransmission"),
    FALLBACK_COLLISION(309, "packets to the server: aggregator busy"),
    FALLBACK_RETRANSMIT(310, "packets to the server: retransmission"),
    FALLBACK_TOMBSTONE(311, "packets to the server: block already evicted or diverted"),
    DUPLICATES(312, "duplicate contributions dropped"),
    RESULT_COPIES(313, "completed sums sent to the server"),
    FALLBACK_BYTES(314, "bytes to the server: raw packets and partials"),
    RESULT_COPY_BYTES(315, "bytes to the server: completed sums"),
    ACKS(316, "server results multicast (ATP acknowledgements)"),
    DROP_MALFORMED(317, "dropped: malformed"),
    DROP_UNKNOWN_JOB(318, "dropped: unknown job"),
    DROP_UNKNOWN_WORKER(319, "dropped: worker id out of range"),
    DROP_BAD_SIZE(320, "dropped: lane count wrong for the job or the block"),
    TX_FULL(321, "messages lost: transport full"),
    JOINS(322, "joins accepted"),
    REJECTS(323, "joins rejected"),
    /** A JOIN without the worker's credential, as {@code SwitchCounter.DROP_BAD_CREDENTIAL} (224). */
    DROP_BAD_CREDENTIAL(324, "dropped: JOIN without the worker's credential (unanswered)"),
    /**
     * An AGGREGATE naming a reserved collective or op, or with the reserved flag, as
     * {@code SwitchCounter.DROP_UNSUPPORTED} (225); the P4 programs' ESA jobs also count here any AGGREGATE but
     * ALL_REDUCE SUM, which the software ESA switch carries, and answer it with REJECT UNSUPPORTED_COLLECTIVE.
     */
    DROP_UNSUPPORTED(325, "dropped: reserved collective or reduce op (P4: not ALL_REDUCE SUM)"),
    /**
     * A JOIN or AGGREGATE from another source than the worker's registered one, or a result from another peer than the
     * job's server: dropped unanswered, as {@code SwitchCounter.DROP_SOURCE_MISMATCH} (209).
     */
    DROP_SOURCE_MISMATCH(326, "dropped: source is not the worker's registered address (or the job's server)"),
    /** A packet of another session than the job's, as {@code SwitchCounter.DROP_STALE_SESSION} (219). */
    DROP_STALE_SESSION(327, "dropped: packet of another session than the job's (answered with REJECT)");

    private final int typeId;
    private final String label;

    EsaCounter(final int typeId, final String label)
    {
        this.typeId = typeId;
        this.label = label;
    }

    @Override
    public int typeId()
    {
        return typeId;
    }

    @Override
    public String label()
    {
        return label;
    }

    @Override
    public String family()
    {
        return "esa_switch";
    }
}
