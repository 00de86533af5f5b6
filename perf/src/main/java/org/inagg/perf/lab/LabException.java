package org.inagg.perf.lab;

/** The lab could not be set up or run: the message names the command or check that failed and what to do. */
public final class LabException extends RuntimeException
{
    public LabException(final String message)
    {
        super(message);
    }

    public LabException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
