package org.inagg.agent.counters;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

/**
 * A counters file ({@link CountersLayout}) mapped read-only: the writer's header and a {@link CountersReader} over its
 * buffers. Reading never blocks or disturbs the writer (values are read with acquire loads, records are taken only once
 * their state says allocated). Close it to unmap; it must not be used afterwards.
 */
public final class CountersFileReader implements AutoCloseable
{
    private final Path path;
    private final MappedByteBuffer mapped;
    private final long pid;
    private final long startTimeMs;
    private final String role;
    private final String name;
    private final CountersReader counters;
    private boolean closed;

    private CountersFileReader(final Path path, final MappedByteBuffer mapped) throws IOException
    {
        this.path = path;
        this.mapped = mapped;
        final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, CountersLayout.HEADER_LENGTH);
        if (header.getLong(CountersLayout.MAGIC_OFFSET) != CountersLayout.MAGIC)
        {
            throw new IOException(path + " is not an inagg counters file (no INAGGCTR magic)");
        }
        final int version = header.getIntAcquire(CountersLayout.VERSION_OFFSET);
        if (version == 0)
        {
            throw new IOException(path + " is still being created");
        }
        if (version != CountersLayout.VERSION)
        {
            throw new IOException(path + " has layout version " + version + "; this reader knows "
                + CountersLayout.VERSION);
        }
        final int headerLength = header.getInt(CountersLayout.HEADER_LENGTH_OFFSET);
        final int metadataLength = header.getInt(CountersLayout.METADATA_LENGTH_OFFSET);
        final int valuesLength = header.getInt(CountersLayout.VALUES_LENGTH_OFFSET);
        final int roleLength = header.getInt(CountersLayout.ROLE_LENGTH_OFFSET);
        final int nameLength = header.getInt(CountersLayout.NAME_LENGTH_OFFSET);
        if (headerLength != CountersLayout.HEADER_LENGTH || valuesLength <= 0
            || valuesLength % CountersReader.COUNTER_LENGTH != 0
            || (long)metadataLength != (long)valuesLength / CountersReader.COUNTER_LENGTH * CountersReader.METADATA_LENGTH
            || headerLength + (long)metadataLength + valuesLength > mapped.capacity()
            || roleLength < 0 || roleLength > CountersLayout.MAX_ROLE_LENGTH
            || nameLength < 0 || nameLength > CountersLayout.MAX_NAME_LENGTH)
        {
            throw new IOException(path + " has an inconsistent header (buffers of " + metadataLength + " and "
                + valuesLength + " bytes in a file of " + mapped.capacity() + ")");
        }
        this.pid = header.getLong(CountersLayout.PID_OFFSET);
        this.startTimeMs = header.getLong(CountersLayout.START_TIME_OFFSET);
        this.role = header.getStringWithoutLengthAscii(CountersLayout.ROLE_OFFSET, roleLength);
        final byte[] nameBytes = new byte[nameLength];
        header.getBytes(CountersLayout.NAME_OFFSET, nameBytes);
        this.name = new String(nameBytes, StandardCharsets.UTF_8);
        this.counters = new CountersReader(
            new UnsafeBuffer(mapped, headerLength, metadataLength),
            new UnsafeBuffer(mapped, headerLength + metadataLength, valuesLength));
    }

    /**
     * Maps {@code path} read-only.
     *
     * @throws IOException if it cannot be read, is not a counters file, or is still being created.
     */
    public static CountersFileReader open(final Path path) throws IOException
    {
        final MappedByteBuffer mapped;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ))
        {
            final long size = channel.size();
            if (size < CountersLayout.HEADER_LENGTH)
            {
                throw new IOException(path + " is still being created (" + size + " bytes)");
            }
            mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
        }
        try
        {
            return new CountersFileReader(path, mapped);
        }
        catch (final IOException | RuntimeException ex)
        {
            IoUtil.unmap(mapped);
            throw ex;
        }
    }

    public Path path()
    {
        return path;
    }

    public long pid()
    {
        return pid;
    }

    /** When the writing process started, ms since the epoch. */
    public long startTimeMs()
    {
        return startTimeMs;
    }

    /** {@code switch}, {@code worker}, {@code ps}, {@code local}... */
    public String role()
    {
        return role;
    }

    /** What the process serves, in words. */
    public String name()
    {
        return name;
    }

    /** The counters, read live. */
    public CountersReader counters()
    {
        return counters;
    }

    /**
     * True if the process that wrote the file is gone although the file is still there: it was killed without its
     * clean-up (SIGKILL, a crash), and its counters stop where it died.
     */
    public boolean isStale()
    {
        return !CountersDirectory.isAlive(pid, startTimeMs);
    }

    /** True once the file is no longer in its directory (the process exited cleanly, or someone removed it). */
    public boolean isRemoved()
    {
        return !Files.exists(path);
    }

    /** Unmaps the file. */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            IoUtil.unmap(mapped);
        }
    }
}
