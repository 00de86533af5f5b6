package org.inagg.p4.bmv2;

/**
 * A P4 tool failed or is missing: the toolchain not found, the compiler refusing the program, simple_switch not
 * starting, simple_switch_CLI not connecting. The message carries the tool's own words (its output's tail), since
 * that is what the operator needs to act on.
 */
public class Bmv2Exception extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public Bmv2Exception(final String message)
    {
        super(message);
    }

    public Bmv2Exception(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
