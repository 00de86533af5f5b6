package org.inagg;

/**
 * A participant stopped answering for longer than the job's peer timeout. {@link #switchAnswers()} says which: the
 * switch itself (no answer to anything, not even the worker's liveness JOINs), or another worker of the job (the
 * switch answers, but the round never completes because some worker stopped contributing).
 */
public final class PeerTimeoutException extends InaggException
{
    private static final long serialVersionUID = 1L;

    private final boolean switchAnswers;

    public PeerTimeoutException(final String message)
    {
        this(message, false);
    }

    public PeerTimeoutException(final String message, final boolean switchAnswers)
    {
        super(message);
        this.switchAnswers = switchAnswers;
    }

    /** True when the switch still answered, so a peer worker is the one gone; false when the switch did not. */
    public boolean switchAnswers()
    {
        return switchAnswers;
    }
}
