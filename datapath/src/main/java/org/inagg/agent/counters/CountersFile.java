package org.inagg.agent.counters;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.inagg.agent.CounterRegistry;

/**
 * A process's counters in a memory-mapped file, {@code <directory>/<role>-<pid>.counters} (layout:
 * {@link CountersLayout}), so that {@code inagg stat} and other tools read them from outside while agents keep
 * incrementing them: the {@link #registry()} lives on the file's buffers, its counters are plain
 * {@link org.agrona.concurrent.status.AtomicCounter}s and updating them takes no lock, no allocation and no system
 * call. The role and pid make the name unique; a second file of the same role in one process gets {@code -2},
 * {@code -3}... after the pid. A file left by an earlier process with the same pid is replaced.
 * <p>
 * The file is removed by {@link #close()} or, on a clean exit (normal end, Ctrl-C, SIGTERM), by a shutdown hook; a
 * process killed with SIGKILL leaves it behind, and readers recognise it as stale by its pid
 * ({@link CountersFileReader#isStale()}). The mapping is never unmapped explicitly: agents may still increment counters
 * while the process shuts down, and an unmapped page would crash them; the memory goes with the last reference.
 */
public final class CountersFile implements AutoCloseable
{
    private static final int MAX_INSTANCES = 1000;

    private final Path path;
    private final CounterRegistry registry;
    private final String role;
    private final long pid;
    private final long startTimeMs;
    private final Thread shutdownHook;
    private final AtomicBoolean closed = new AtomicBoolean();
    @SuppressWarnings("unused") // the mapping lives as long as this file
    private final MappedByteBuffer mapped;

    private CountersFile(final Path path, final MappedByteBuffer mapped, final String role, final long pid,
        final long startTimeMs, final int metadataLength, final int valuesLength)
    {
        this.path = path;
        this.mapped = mapped;
        this.role = role;
        this.pid = pid;
        this.startTimeMs = startTimeMs;
        this.registry = new CounterRegistry(
            new UnsafeBuffer(mapped, CountersLayout.HEADER_LENGTH, metadataLength),
            new UnsafeBuffer(mapped, CountersLayout.HEADER_LENGTH + metadataLength, valuesLength));
        this.shutdownHook = new Thread(this::delete, "inagg-counters-file-cleanup");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Creates the counters file of this process.
     *
     * @param directory where (created if missing); see {@link CountersDirectory#resolve}.
     * @param role      what the process is, lower case: {@code switch}, {@code worker}, {@code ps}, {@code local}...
     * @param name      what it serves, for people: e.g. {@code switch udp://0.0.0.0:9000 jobs 1:4} (truncated to
     *                  {@link CountersLayout#MAX_NAME_LENGTH} bytes).
     * @param capacity  most counters.
     * @throws IOException if the directory or the file cannot be created.
     */
    public static CountersFile create(final Path directory, final String role, final String name, final int capacity)
        throws IOException
    {
        if (!role.matches("[a-z][a-z0-9_-]*") || role.length() > CountersLayout.MAX_ROLE_LENGTH)
        {
            throw new IllegalArgumentException("role must be [a-z][a-z0-9_-]* of at most "
                + CountersLayout.MAX_ROLE_LENGTH + " characters: '" + role + "'");
        }
        if (capacity < 1)
        {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        Files.createDirectories(directory);
        final long pid = ProcessHandle.current().pid();
        final long startTimeMs = CountersDirectory.processStartTimeMs();
        final int metadataLength = capacity * CountersReader.METADATA_LENGTH;
        final int valuesLength = capacity * CountersReader.COUNTER_LENGTH;
        final long length = CountersLayout.fileLength(capacity);
        for (int instance = 1; instance <= MAX_INSTANCES; instance++)
        {
            final Path path = directory.resolve(role + "-" + pid + (instance == 1 ? "" : "-" + instance)
                + CountersLayout.FILE_SUFFIX);
            FileChannel channel;
            try
            {
                channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            }
            catch (final FileAlreadyExistsException taken)
            {
                if (!leftByEarlierProcess(path, pid, startTimeMs))
                {
                    continue; // this process's own
                }
                Files.deleteIfExists(path);
                try
                {
                    channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
                }
                catch (final FileAlreadyExistsException again)
                {
                    continue;
                }
            }
            final MappedByteBuffer mapped;
            try (FileChannel owned = channel)
            {
                mapped = owned.map(FileChannel.MapMode.READ_WRITE, 0, length);
            }
            catch (final IOException | RuntimeException ex)
            {
                Files.deleteIfExists(path);
                throw ex;
            }
            writeHeader(new UnsafeBuffer(mapped, 0, CountersLayout.HEADER_LENGTH), role, name, pid, startTimeMs,
                metadataLength, valuesLength);
            final CountersFile file = new CountersFile(path, mapped, role, pid, startTimeMs, metadataLength,
                valuesLength);
            new UnsafeBuffer(mapped, 0, CountersLayout.HEADER_LENGTH)
                .putIntRelease(CountersLayout.VERSION_OFFSET, CountersLayout.VERSION);
            return file;
        }
        throw new IOException("no free counters file name for role " + role + " and pid " + pid + " in " + directory);
    }

    private static void writeHeader(final UnsafeBuffer header, final String role, final String name, final long pid,
        final long startTimeMs, final int metadataLength, final int valuesLength)
    {
        header.putLong(CountersLayout.MAGIC_OFFSET, CountersLayout.MAGIC);
        header.putInt(CountersLayout.HEADER_LENGTH_OFFSET, CountersLayout.HEADER_LENGTH);
        header.putLong(CountersLayout.PID_OFFSET, pid);
        header.putLong(CountersLayout.START_TIME_OFFSET, startTimeMs);
        header.putInt(CountersLayout.METADATA_LENGTH_OFFSET, metadataLength);
        header.putInt(CountersLayout.VALUES_LENGTH_OFFSET, valuesLength);
        final byte[] roleBytes = role.getBytes(StandardCharsets.US_ASCII);
        header.putInt(CountersLayout.ROLE_LENGTH_OFFSET, roleBytes.length);
        header.putBytes(CountersLayout.ROLE_OFFSET, roleBytes);
        final byte[] nameBytes = truncate(name == null ? "" : name, CountersLayout.MAX_NAME_LENGTH);
        header.putInt(CountersLayout.NAME_LENGTH_OFFSET, nameBytes.length);
        header.putBytes(CountersLayout.NAME_OFFSET, nameBytes);
    }

    /** The UTF-8 bytes of the longest prefix of {@code text} that fits {@code max} bytes. */
    private static byte[] truncate(final String text, final int max)
    {
        String prefix = text;
        byte[] bytes = prefix.getBytes(StandardCharsets.UTF_8);
        while (bytes.length > max)
        {
            prefix = prefix.substring(0, prefix.offsetByCodePoints(prefix.length(), -1));
            bytes = prefix.getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }

    /** True if {@code path} is a complete file that an earlier process with this pid left behind. */
    private static boolean leftByEarlierProcess(final Path path, final long pid, final long startTimeMs)
    {
        try (CountersFileReader existing = CountersFileReader.open(path))
        {
            return existing.pid() == pid
                && Math.abs(existing.startTimeMs() - startTimeMs) > CountersDirectory.START_TIME_TOLERANCE_MS;
        }
        catch (final IOException | RuntimeException ex)
        {
            return false; // being created by this process, or not ours to judge
        }
    }

    /** The counters, on the file's buffers. */
    public CounterRegistry registry()
    {
        return registry;
    }

    public Path path()
    {
        return path;
    }

    public String role()
    {
        return role;
    }

    public long pid()
    {
        return pid;
    }

    public long startTimeMs()
    {
        return startTimeMs;
    }

    /** Removes the file (the counters stay usable in memory until the last reference goes). Idempotent. */
    @Override
    public void close()
    {
        delete();
        try
        {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        }
        catch (final IllegalStateException shuttingDown)
        {
            // the hook runs, or ran, anyway
        }
    }

    private void delete()
    {
        if (closed.compareAndSet(false, true))
        {
            try
            {
                Files.deleteIfExists(path);
            }
            catch (final IOException ex)
            {
                System.getLogger(CountersFile.class.getName()).log(System.Logger.Level.WARNING,
                    () -> "cannot remove the counters file " + path + ": " + ex.getMessage());
            }
        }
    }
}
