package org.inagg.p4.softswitch;

import org.inagg.agent.CounterDescriptor;

/** Counters of the software switch: fixed type ids (2xx), one per outcome of the pipeline. */
public enum SwitchCounter implements CounterDescriptor
{
    RECEIVED(201, "messages received"),
    CONTRIBUTIONS(202, "contributions aggregated"),
    RESULTS_SENT(203, "results sent (multicast copies)"),
    RETRANSMIT_REPLIES(204, "results re-sent to one worker"),
    DUPLICATES(205, "duplicate contributions dropped"),
    DROP_MALFORMED(206, "dropped: malformed"),
    DROP_UNKNOWN_JOB(207, "dropped: unknown job"),
    DROP_UNKNOWN_WORKER(208, "dropped: worker id out of range (or not served by this switch)"),
    DROP_SOURCE_MISMATCH(209, "dropped: source is not the worker's joined address"),
    DROP_BAD_SLOT(210, "dropped: slot out of the job's pool"),
    DROP_BAD_SIZE(211, "dropped: element count wrong for the job or the round"),
    DROP_STALE(212, "dropped: stale round (late duplicate)"),
    DROP_VIOLATION(213, "dropped: newer round on an incomplete slot"),
    TX_FULL(214, "results lost: transport full"),
    JOINS(215, "joins accepted"),
    REJECTS(216, "joins rejected"),
    UPSTREAM_PARTIALS(217, "two-level: local sums sent up to the parameter server"),
    UPSTREAM_FORWARDS(218, "two-level: packets of completed rounds forwarded to the parameter server"),
    DROP_STALE_SESSION(219, "dropped: packet of another session than the job's (answered with REJECT)"),
    /**
     * A JOIN that does not show the worker's JOIN credential (docs/security.md): dropped unanswered, the session
     * untouched. Number 24 of every family (224 here, {@code EsaCounter} 324, {@code ServerCounter} 424) and index 24
     * of {@code inagg_counters} in both P4 programs, for every kind of job.
     */
    DROP_BAD_CREDENTIAL(224, "dropped: JOIN without the worker's credential (unanswered)"),
    /**
     * An AGGREGATE naming a reserved collective or op (the reserved flag set is malformed; docs/wire-format.md,
     * "Collectives and reduce ops"). The P4 programs also count here any collective or op but ALL_REDUCE SUM of a
     * two-level job, which the software switch sends up, and (Tofino) a REDUCE_SCATTER of a job of more than 32 lanes,
     * and answer those with REJECT UNSUPPORTED_COLLECTIVE (docs/p4.md). Number 25 of every family (225 here,
     * {@code EsaCounter} 325, {@code ServerCounter} 425) and index 25 of {@code inagg_counters} in both P4 programs.
     */
    DROP_UNSUPPORTED(225, "dropped: collective or reduce op not supported (reserved; P4: not ALL_REDUCE SUM upstream)"),
    /**
     * Two-level, results down the tree ({@code UpstreamAggregation#resultsDown}): RESULTs of the parameter server
     * relayed to the local workers, one per round (the copies count {@link #RESULTS_SENT}). Software only: the P4
     * programs never ask for it.
     */
    RESULTS_RELAYED(226, "two-level: results from the parameter server relayed down to the local workers");

    private final int typeId;
    private final String label;

    SwitchCounter(final int typeId, final String label)
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
        return "switch";
    }
}
