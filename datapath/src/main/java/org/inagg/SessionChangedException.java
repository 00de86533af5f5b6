package org.inagg;

/**
 * The job moved to another session while this worker was in an earlier one: a worker of the job rejoined as a new
 * process (it was restarted), or the control plane started the job again. The run this worker belonged to is over;
 * its operations fail at once rather than waiting for results that will never come.
 */
public final class SessionChangedException extends InaggException
{
    private static final long serialVersionUID = 1L;

    private final int session;
    private final int currentSession;
    private final int rejoinedWorker;

    /**
     * @param session        the session this worker was in.
     * @param currentSession the job's session now.
     * @param rejoinedWorker the worker whose rejoin started it, or -1 when the control plane did.
     */
    public SessionChangedException(
        final String message, final int session, final int currentSession, final int rejoinedWorker)
    {
        super(message);
        this.session = session;
        this.currentSession = currentSession;
        this.rejoinedWorker = rejoinedWorker;
    }

    public int session()
    {
        return session;
    }

    public int currentSession()
    {
        return currentSession;
    }

    /** The worker whose rejoin started the current session, or -1 when the control plane started it. */
    public int rejoinedWorker()
    {
        return rejoinedWorker;
    }
}
