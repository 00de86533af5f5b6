package org.inagg.perf.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import picocli.CommandLine.Option;

/**
 * What the seed benchmarks ({@code bench-esa}, {@code bench-ps-split}) share: rounds, a run's limit, the log folder,
 * the child JVMs' options, and the load line every figure of a shared machine is given with.
 */
final class SeedBenchOptions
{
    @Option(names = "--rounds", defaultValue = "2",
        description = "Runs of each case, in rotating order (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--timeout-s", defaultValue = "300", description = "One run's limit (default ${DEFAULT-VALUE}).")
    long timeoutS;

    @Option(names = "--work-dir", description = "Folder of the logs (default: a new temporary folder).")
    Path workDir;

    @Option(names = "--jvm-option", description = "Extra option of every child JVM (repeatable).")
    List<String> jvmOptions = new ArrayList<>();

    /** @throws IllegalArgumentException when --rounds or --timeout-s is not positive. */
    void validate()
    {
        if (rounds < 1 || timeoutS < 1)
        {
            throw new IllegalArgumentException("--rounds and --timeout-s must be positive");
        }
    }

    /** --work-dir (created), or a new temporary folder named {@code prefix...}. */
    Path workFolder(final String prefix)
    {
        try
        {
            return workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory(prefix);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("creating the work folder", ex);
        }
    }

    /** /proc/loadavg as it reads now. */
    static String loadAverage()
    {
        try
        {
            return Files.readString(Path.of("/proc/loadavg")).strip();
        }
        catch (final IOException ex)
        {
            return "unknown";
        }
    }
}
