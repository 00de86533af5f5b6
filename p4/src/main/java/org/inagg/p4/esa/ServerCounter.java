package org.inagg.p4.esa;

import org.inagg.agent.CounterDescriptor;

/**
 * Counters of the parameter server: fixed type ids (4xx); the outcomes every node counts under the names of
 * {@code org.inagg.p4.pipeline.NodeCounter}.
 */
public enum ServerCounter implements CounterDescriptor
{
    RECEIVED(401, "messages received"),
    RAW_MERGED(402, "raw fragments merged"),
    PARTIALS_MERGED(403, "partials merged"),
    DUPLICATES(404, "fragments or partials already counted"),
    OVERLAPS(405, "partials overlapping counted workers, dropped"),
    COMPLETED(406, "blocks completed by the server"),
    RESULT_COPIES(407, "completed sums kept from the switch"),
    RESULTS_SENT(408, "results sent"),
    RETRANSMIT_REPLIES(409, "retransmissions answered"),
    LATE(410, "fragments of completed blocks dropped"),
    DROP_MALFORMED(411, "dropped: malformed (or a PARTIAL whose bitmap does not fit the job)"),
    TX_FULL(412, "results lost: transport full"),
    JOINS(413, "joins accepted (workers sending to the server directly)"),
    REJECTS(414, "joins rejected"),
    EVICTED(415, "open blocks evicted by a newer round of their slot copy (completed elsewhere)"),
    DROP_UNKNOWN_JOB(416, "dropped: unknown job"),
    DROP_UNKNOWN_WORKER(417, "dropped: worker id out of range (or a JOIN of a job whose workers join the switch)"),
    /**
     * A JOIN from another source than the worker's registered one, as {@code SwitchCounter.DROP_SOURCE_MISMATCH}; also
     * a fragment or PARTIAL of a newer session from a peer that is not a switch of the job.
     */
    DROP_SOURCE_MISMATCH(418, "dropped: JOIN from another source than the worker's registered address, or a newer "
        + "session's fragment or partial from a peer that is no switch of the job"),
    DROP_BAD_SIZE(419, "dropped: lane count differs from the block's"),
    /** A fragment or PARTIAL of an older session than the job's, as {@code SwitchCounter.DROP_STALE_SESSION} (219). */
    DROP_STALE_SESSION(420, "dropped: fragment or partial of an older session than the job's"),
    /** A JOIN without the worker's credential, as {@code SwitchCounter.DROP_BAD_CREDENTIAL} (224). */
    DROP_BAD_CREDENTIAL(424, "dropped: JOIN without the worker's credential (unanswered)"),
    /**
     * An AGGREGATE or PARTIAL naming a reserved collective or op (or an AGGREGATE with the reserved flag), as
     * {@code SwitchCounter.DROP_UNSUPPORTED} (225).
     */
    DROP_UNSUPPORTED(425, "dropped: reserved collective or reduce op"),
    /**
     * Results sent once to a first-level switch for the workers of its PARTIAL, which asked for it
     * ({@link EsaWire#FLAG_RESULTS_DOWN}) and multicasts it to them; not counted again in {@link #RESULTS_SENT}.
     */
    RESULTS_TO_SUBTREES(426, "results sent once per first-level switch (results down the tree)");

    private final int typeId;
    private final String label;

    ServerCounter(final int typeId, final String label)
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
        return "ps";
    }
}
