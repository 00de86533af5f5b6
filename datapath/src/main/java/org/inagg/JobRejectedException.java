package org.inagg;

/** The switch refused a worker's join, or its answer contradicts the worker's configuration. */
public final class JobRejectedException extends InaggException
{
    private static final long serialVersionUID = 1L;

    public JobRejectedException(final String message)
    {
        super(message);
    }
}
