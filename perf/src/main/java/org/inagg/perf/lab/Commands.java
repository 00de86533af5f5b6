package org.inagg.perf.lab;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs short system commands ({@code ip}, {@code ethtool}, {@code sysctl}) and turns failures into clear errors. */
final class Commands
{
    private Commands()
    {
    }

    /** Runs the command; null on success, else what failed with its output. */
    static String tryRun(final List<String> command)
    {
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return "`" + String.join(" ", command) + "` did not finish within 30 s";
            }
            return process.exitValue() == 0 ? null
                : "`" + String.join(" ", command) + "` failed (exit " + process.exitValue() + "): " + output;
        }
        catch (final IOException ex)
        {
            return "`" + String.join(" ", command) + "` could not start: " + ex.getMessage();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return "`" + String.join(" ", command) + "` interrupted";
        }
    }

    /** Runs the command; throws {@link LabException} naming it and its output on failure. */
    static void run(final List<String> command)
    {
        final String failure = tryRun(command);
        if (failure != null)
        {
            throw new LabException(failure);
        }
    }

    /** The command's standard output, or "" if it failed. */
    static String output(final List<String> command)
    {
        try
        {
            final Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0 ? output : "";
        }
        catch (final IOException ex)
        {
            return "";
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
