package org.inagg.services.agent;

/** What a rank sent or wrote breaks the agent protocol; {@link #code()} is the error code sent back to the rank. */
public final class AgentProtocolException extends RuntimeException
{
    private final int code;

    public AgentProtocolException(final int code, final String message)
    {
        super(message);
        this.code = code;
    }

    /** One of {@link AgentProtocol}'s {@code ERROR_*} codes. */
    public int code()
    {
        return code;
    }
}
