package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

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

    /** What {@code args} are refused with (asserting exit 1); their standard output is dropped. */
    static String refusal(final String... args)
    {
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = printingErrorsTo(err);
        commandLine.setOut(new PrintWriter(new StringWriter()));
        assertThat(commandLine.execute(args)).isEqualTo(1);
        return err.toString();
    }
}
