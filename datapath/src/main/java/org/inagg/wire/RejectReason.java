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

    private RejectReason()
    {
    }

    public static String describe(final int status)
    {
        return switch (status)
        {
            case UNKNOWN_JOB -> "the switch has no such job";
            case WORKER_ID_OUT_OF_RANGE -> "the worker id is not below the job's worker count";
            case WORKER_COUNT_MISMATCH -> "the worker count differs from the job's on the switch";
            case STALE_SESSION -> "the job is in another session (it was restarted)";
            default -> "reason code " + status;
        };
    }
}
