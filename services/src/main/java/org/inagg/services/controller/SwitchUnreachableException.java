package org.inagg.services.controller;

/** A switch that did not answer the controller (down, wrong address, timed out); the message names it. */
public final class SwitchUnreachableException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public SwitchUnreachableException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
