package org.inagg.wire;

/** Status codes of a {@link MessageType#REJECT}. */
public final class RejectReason
{
    public static final int UNKNOWN_JOB = 1;
    public static final int WORKER_ID_OUT_OF_RANGE = 2;
    public static final int WORKER_COUNT_MISMATCH = 3;

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
            default -> "reason code " + status;
        };
    }
}
