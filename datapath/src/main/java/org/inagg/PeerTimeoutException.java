package org.inagg;

/** A participant (the switch or another worker) stopped answering for longer than the job's peer timeout. */
public final class PeerTimeoutException extends InaggException
{
    private static final long serialVersionUID = 1L;

    public PeerTimeoutException(final String message)
    {
        super(message);
    }
}
