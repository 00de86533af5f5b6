package org.inagg.perf.profile;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

/**
 * async-profiler's native agent for the inagg processes a benchmark starts: the library is taken from the
 * {@code tools.profiler:async-profiler} jar on the class path (shaded into inagg.jar), written once into a private
 * temporary folder, and loaded into each child JVM with {@code -agentpath}. The agent samples CPU time with perf events
 * (kernel frames included, so system calls show as what they are; where perf events are not allowed it falls back to
 * timers), from the JVM's start to its exit, one file of collapsed stacks per process, per thread.
 */
public final class AsyncProfilerAgent
{
    /** Sampling interval: 1 ms of CPU time, about 1,000 samples per busy core-second. */
    public static final long INTERVAL_NS = 1_000_000;
    /** Replaced in a JVM option by the process's role ({@code switch}, {@code worker}, ...): see {@code InaggJvm}. */
    public static final String ROLE = "{role}";
    /** The suffix of the stacks files. */
    public static final String COLLAPSED = ".collapsed";

    private static Path library;

    private AsyncProfilerAgent()
    {
    }

    /**
     * The JVM option that profiles a process into {@code dir/<role>-<pid>.collapsed}.
     *
     * @throws IllegalStateException naming the platform where async-profiler has no library for it.
     */
    public static String jvmOption(final Path dir)
    {
        final Path out = dir.toAbsolutePath();
        if (out.toString().contains(","))
        {
            throw new IllegalArgumentException("--profile " + out + ": the folder's path must not contain a comma "
                + "(async-profiler's options are comma separated)");
        }
        return "-agentpath:" + library() + "=start,event=cpu,interval=" + INTERVAL_NS + ",threads,collapsed,file="
            + out.resolve(ROLE + "-%p" + COLLAPSED);
    }

    /** The library, written to a private temporary folder on first use. */
    static synchronized Path library()
    {
        if (library != null)
        {
            return library;
        }
        final String resource = platform() + "/libasyncProfiler.so";
        try (InputStream in = AsyncProfilerAgent.class.getClassLoader().getResourceAsStream(resource))
        {
            if (in == null)
            {
                throw new IllegalStateException("async-profiler's " + resource + " is not on the class path (the "
                    + "tools.profiler:async-profiler jar; inagg.jar carries it)");
            }
            final Path folder = Files.createTempDirectory("inagg-async-profiler",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            final Path file = folder.resolve("libasyncProfiler.so");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            file.toFile().deleteOnExit();
            folder.toFile().deleteOnExit();
            library = file;
            return file;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write async-profiler's library: " + ex.getMessage(), ex);
        }
    }

    private static String platform()
    {
        final String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        final String arch = System.getProperty("os.arch");
        if (!os.contains("linux"))
        {
            throw new IllegalStateException("profiling needs Linux (async-profiler's agent), not " + os);
        }
        return switch (arch)
        {
            case "amd64", "x86_64" -> "linux-x64";
            case "aarch64", "arm64" -> "linux-arm64";
            default -> throw new IllegalStateException("async-profiler has no library for " + os + " " + arch);
        };
    }
}
