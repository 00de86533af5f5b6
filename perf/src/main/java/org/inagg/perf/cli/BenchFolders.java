package org.inagg.perf.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the seed benchmarks ({@code bench-esa}, {@code bench-ps-split}) share: their log folder and the load line. */
final class BenchFolders
{
    private BenchFolders()
    {
    }

    /** {@code given} (created), or a new temporary folder named {@code prefix...}. */
    static Path workFolder(final Path given, final String prefix)
    {
        try
        {
            return given != null ? Files.createDirectories(given) : Files.createTempDirectory(prefix);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("creating the work folder", ex);
        }
    }

    /** /proc/loadavg as it reads now: every figure of a shared machine says the load it was taken under. */
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
