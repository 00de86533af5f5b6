package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

import picocli.CommandLine;

/** {@code bin/inagg} in the test's JVM whose refusals (a command's exception) are printed to {@code err}, exit 1. */
final class RefusingCli
{
    private RefusingCli()
    {
    }

    static CommandLine printingErrorsTo(final StringWriter err)
    {
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setErr(new PrintWriter(err));
        commandLine.setExecutionExceptionHandler((ex, cmd, parsed) ->
        {
            cmd.getErr().println(ex.getMessage());
            return 1;
        });
        return commandLine;
    }
}
