package org.inagg.services.controller;

/** A controller that refused a rank, did not answer, or did not start its job in time; the message says which. */
public final class ControllerException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int status;

    public ControllerException(final int status, final String message)
    {
        super(message);
        this.status = status;
    }

    public ControllerException(final String message, final Throwable cause)
    {
        super(message, cause);
        this.status = 0;
    }

    /** The HTTP status the controller answered, or 0 when it did not answer. */
    public int status()
    {
        return status;
    }
}
