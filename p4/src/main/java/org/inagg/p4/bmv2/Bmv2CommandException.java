package org.inagg.p4.bmv2;

/**
 * bmv2 refused one {@code simple_switch_CLI} command: the message names the command (table and entry, or register,
 * group, node), what it was for (e.g. {@code for job 7}) and bmv2's reason, e.g.
 * {@code bmv2 refused table_add InaggIngress.job_table InaggIngress.set_job 7 => 2 4 0 8 1 for job 7: DUPLICATE_ENTRY}.
 */
public class Bmv2CommandException extends Bmv2Exception
{
    private static final long serialVersionUID = 1L;

    private final String command;
    private final String reason;
    private final String output;

    /**
     * @param command the command as sent.
     * @param context what it was for ({@code "job 7"}), or null.
     * @param reason  bmv2's reason: the error code of an "Invalid ... operation (CODE)" answer, else its error line.
     * @param output  everything the CLI printed for the command.
     */
    public Bmv2CommandException(final String command, final String context, final String reason, final String output)
    {
        super("bmv2 refused " + command + (context == null ? "" : " for " + context) + ": " + reason);
        this.command = command;
        this.reason = reason;
        this.output = output;
    }

    /** The same refusal, saying what the command was for. */
    public Bmv2CommandException withContext(final String context)
    {
        final Bmv2CommandException ex = new Bmv2CommandException(command, context, reason, output);
        ex.setStackTrace(getStackTrace());
        for (final Throwable suppressed : getSuppressed())
        {
            ex.addSuppressed(suppressed);
        }
        return ex;
    }

    /** The refused command. */
    public String command()
    {
        return command;
    }

    /** bmv2's reason, e.g. {@code DUPLICATE_ENTRY} or {@code Invalid table name (InaggIngress.foo)}. */
    public String reason()
    {
        return reason;
    }

    /** What the CLI printed for the command. */
    public String output()
    {
        return output;
    }
}
