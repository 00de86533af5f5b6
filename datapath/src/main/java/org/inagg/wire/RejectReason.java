package org.inagg.wire;

/** Status codes of a {@link MessageType#REJECT}. */
public final class RejectReason
{
    public static final int UNKNOWN_JOB = 1;
    public static final int WORKER_ID_OUT_OF_RANGE = 2;
    public static final int WORKER_COUNT_MISMATCH = 3;
    /**
     * The message belongs to another session than the job's current one: the job was restarted (a worker rejoined as
     * a new incarnation, or the control plane started a new session). Answers a JOIN asking for another session and
     * an AGGREGATE of an old one.
     */
    public static final int STALE_SESSION = 4;
    /**
     * The node the worker sends to does not carry the collective or reduce op of the worker's AGGREGATE
     * (docs/wire-format.md, "Collectives and reduce ops", "Where they run"): the REJECT names them in its Flags bits
     * 3-6, where the AGGREGATE had them, and the job's current session, so that the worker fails at once instead of at
     * its peer timeout. For a node that does not carry some collective, answering an AGGREGATE that passed its worker,
     * source and session checks. The software nodes carry every collective and op, so none of them sends it today; the
     * P4 programs send it for what they do not carry on a job: anything but ALL_REDUCE SUM on an ESA or two-level job,
     * and (Tofino) REDUCE_SCATTER on a job of more than 32 lanes (docs/wire-format.md, "Where they run"; docs/p4.md).
     */
    public static final int UNSUPPORTED_COLLECTIVE = 5;

    private RejectReason()
    {
    }

    /**
     * The collective and reduce op that Flags bits 3-6 name (an AGGREGATE's, or an UNSUPPORTED_COLLECTIVE REJECT's), as
     * "collective REDUCE_SCATTER (op MAX)".
     */
    public static String describeCollective(final int flags)
    {
        final int collective = (flags & InaggHeader.COLLECTIVE_MASK) >>> InaggHeader.COLLECTIVE_SHIFT;
        final int op = (flags & InaggHeader.OP_MASK) >>> InaggHeader.OP_SHIFT;
        final String name = switch (collective)
        {
            case InaggHeader.COLLECTIVE_ALL_REDUCE -> "ALL_REDUCE";
            case InaggHeader.COLLECTIVE_REDUCE_SCATTER -> "REDUCE_SCATTER";
            case InaggHeader.COLLECTIVE_ALL_GATHER -> "ALL_GATHER";
            default -> "reserved " + collective;
        };
        final String opName = switch (op)
        {
            case InaggHeader.OP_SUM -> "SUM";
            case InaggHeader.OP_MIN -> "MIN";
            case InaggHeader.OP_MAX -> "MAX";
            default -> "reserved " + op;
        };
        return collective == InaggHeader.COLLECTIVE_ALL_GATHER ? "collective ALL_GATHER"
            : "collective " + name + " (op " + opName + ")";
    }

    public static String describe(final int status)
    {
        return switch (status)
        {
            case UNKNOWN_JOB -> "the switch has no such job";
            case WORKER_ID_OUT_OF_RANGE -> "the worker id is not below the job's worker count";
            case WORKER_COUNT_MISMATCH -> "the worker count differs from the job's on the switch";
            case STALE_SESSION -> "the job is in another session (it was restarted)";
            case UNSUPPORTED_COLLECTIVE -> "the node does not carry this collective or reduce op";
            default -> "reason code " + status;
        };
    }
}
