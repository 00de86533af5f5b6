package org.inagg;

/** Base of the errors inagg reports; the message names what is wrong and, where it can, what to do. */
public class InaggException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public InaggException(final String message)
    {
        super(message);
    }

    public InaggException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
