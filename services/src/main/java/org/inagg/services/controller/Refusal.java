package org.inagg.services.controller;

/**
 * A request the job lifecycle refuses ({@link JobLifecycle}): {@link #reason()} says which rule, the message says why
 * in the words a rank or an operator acts on (the job, the rank, both values of a disagreement). The HTTP edge maps a
 * reason onto a status ({@link JobRegistry}); nothing here knows of HTTP.
 */
final class Refusal extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /** Why a request was refused. */
    enum Reason
    {
        /** No such job, or no such registration to delete. */
        UNKNOWN,
        /** The registration ended (deleted, lost, replaced) or belongs to an older session: register again. */
        GONE,
        /** The caller shows neither the job's secret nor the operator's token, or states a source not its own. */
        NOT_ALLOWED,
        /** A rank disagrees with the job as admitted (world size, dtype, elements, slots). */
        MISMATCH,
        /** No slot range or job id is free for a new job now. */
        NO_ROOM,
        /** The journal cannot be written, so no change can be recorded. */
        JOURNAL_DOWN
    }

    private final Reason reason;

    Refusal(final Reason reason, final String message)
    {
        super(message);
        this.reason = reason;
    }

    Refusal(final Reason reason, final String message, final Throwable cause)
    {
        super(message, cause);
        this.reason = reason;
    }

    Reason reason()
    {
        return reason;
    }
}
