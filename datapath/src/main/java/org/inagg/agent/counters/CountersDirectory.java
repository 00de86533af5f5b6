package org.inagg.agent.counters;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Where counters files live: {@code --counters-dir} when given, else the system property {@value #DIR_PROP_NAME},
 * else the environment variable {@value #DIR_ENV_NAME}, else {@code /dev/shm/inagg} where {@code /dev/shm} exists
 * (memory, never written to disk), else {@code inagg} under {@code java.io.tmpdir}. Each process's file is
 * {@code <role>-<pid>.counters}.
 */
public final class CountersDirectory
{
    public static final String DIR_PROP_NAME = "inagg.dir";
    public static final String DIR_ENV_NAME = "INAGG_DIR";
    /** How far a process's start time may be from the one a file recorded and still be the same process. */
    static final long START_TIME_TOLERANCE_MS = 1000;

    private CountersDirectory()
    {
    }

    /** The directory: {@code explicit} if not null, else the property, the environment, the default. */
    public static Path resolve(final String explicit)
    {
        if (explicit != null && !explicit.isBlank())
        {
            return Path.of(explicit);
        }
        final String property = System.getProperty(DIR_PROP_NAME);
        if (property != null && !property.isBlank())
        {
            return Path.of(property);
        }
        final String env = System.getenv(DIR_ENV_NAME);
        if (env != null && !env.isBlank())
        {
            return Path.of(env);
        }
        final Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) ? shm.resolve("inagg") : Path.of(System.getProperty("java.io.tmpdir"), "inagg");
    }

    /** The counters files in {@code directory}, by name; empty if it does not exist. */
    public static List<Path> files(final Path directory) throws IOException
    {
        if (!Files.isDirectory(directory))
        {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(directory))
        {
            return entries.filter(p -> p.getFileName().toString().endsWith(CountersLayout.FILE_SUFFIX)
                && Files.isRegularFile(p)).sorted().toList();
        }
    }

    /**
     * True if process {@code pid} runs and is the one that started at {@code startTimeMs} (not a later process that
     * got the same pid). A process in another pid namespace (another container) is not visible and reads as gone.
     */
    public static boolean isAlive(final long pid, final long startTimeMs)
    {
        final Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !handle.get().isAlive())
        {
            return false;
        }
        final Optional<Instant> started = handle.get().info().startInstant();
        return started.isEmpty() || Math.abs(started.get().toEpochMilli() - startTimeMs) <= START_TIME_TOLERANCE_MS;
    }

    /** This process's start time in ms since the epoch (now, where the system does not say). */
    static long processStartTimeMs()
    {
        return ProcessHandle.current().info().startInstant().map(Instant::toEpochMilli)
            .orElseGet(System::currentTimeMillis);
    }
}
