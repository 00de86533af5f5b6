package org.inagg.services.controller;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.JsonHttp;

/**
 * The controller's journal: one JSON object per line, each written and fsync'd before the change it records is
 * answered or reaches a switch ({@link JournalRecords} has the records). Replay reads the file as a stream, line by
 * line, a line over {@link #MAX_LINE_BYTES} or one that is not a JSON object (a crash mid-write) skipped and logged.
 * {@link #compactIfDue} rewrites the file with the live state only (a temporary file, fsync'd, renamed over the
 * journal) once the lines appended since the last compaction outnumber twice what it wrote plus 256, so the file stays
 * within a constant factor of the live state and each change costs amortised O(1). A compaction that fails (a full or
 * read-only disk) is logged and retried later; the journal it leaves is whole and appends go on. Lease renewals are
 * not journaled: after a restart every lease starts afresh. The lines hold the ranks' JOIN credentials
 * (docs/security.md), so the file is its user's alone (mode 0600 where the file system has modes). Not thread-safe: {@link JobJournal} calls it under the
 * {@link RegistryState}'s monitor.
 */
final class Journal implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(Journal.class.getName());

    /**
     * Longer lines are not the controller's, skipped unread: this version's longest is a job header, under 1 KiB; an
     * earlier version's line held a whole job, about 100 bytes per rank, 6.5 MB at 65,535 ranks.
     */
    static final int MAX_LINE_BYTES = 16 << 20;
    /** Appended lines tolerated above twice the last compaction's before the next. */
    static final int COMPACTION_SLACK = 256;

    private final Path path;
    private FileChannel channel;
    /** Lines in the file now. */
    private long lines;
    /** {@link #lines} at which {@link #compactIfDue} compacts next. */
    private long compactAt = COMPACTION_SLACK;
    private int failedCompactions;
    private boolean closed;

    private Journal(final Path path)
    {
        this.path = path;
    }

    /** Opens (creating) the journal at {@code path}; {@link #replay} has its lines. */
    static Journal open(final Path path)
    {
        final Journal journal = new Journal(path);
        try
        {
            if (path.getParent() != null)
            {
                Files.createDirectories(path.getParent());
            }
            journal.channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND);
            restrict(path);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("controller journal " + path + ": " + ex.getMessage(), ex);
        }
        return journal;
    }

    Path path()
    {
        return path;
    }

    /** Lines in the file now (after {@link #replay}, the replayed ones included). */
    long lines()
    {
        return lines;
    }

    /** Compactions that failed since the journal was opened (tests, logs). */
    int failedCompactions()
    {
        return failedCompactions;
    }

    /**
     * Feeds the journal's records to {@code sink}, oldest first, one line in memory at a time; a torn, unreadable or
     * over-long line is skipped (and logged).
     */
    void replay(final Consumer<ObjectNode> sink)
    {
        long number = 0;
        long read = 0;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(path), 1 << 16))
        {
            byte[] line = new byte[4096]; // grows to the longest line read, at most MAX_LINE_BYTES
            int length = 0;
            boolean overLong = false;
            int b;
            while (true)
            {
                b = in.read();
                if (b != '\n' && b != -1)
                {
                    if (length == line.length && length < MAX_LINE_BYTES)
                    {
                        line = java.util.Arrays.copyOf(line, Math.min(MAX_LINE_BYTES, 2 * length));
                    }
                    if (length < line.length)
                    {
                        line[length++] = (byte)b;
                    }
                    else
                    {
                        overLong = true;
                    }
                    continue;
                }
                if (length > 0 || overLong)
                {
                    number++;
                    final long lineNumber = number;
                    if (overLong)
                    {
                        LOGGER.log(System.Logger.Level.WARNING, () -> "controller journal " + path + ": line "
                            + lineNumber + " is longer than " + MAX_LINE_BYTES + " bytes; skipped");
                    }
                    else
                    {
                        final ObjectNode record = parse(line, length);
                        if (record != null)
                        {
                            read++;
                            sink.accept(record);
                        }
                        else
                        {
                            LOGGER.log(System.Logger.Level.WARNING, () -> "controller journal " + path + ": line "
                                + lineNumber + " is not a JSON object (torn write?); skipped");
                        }
                    }
                }
                length = 0;
                overLong = false;
                if (b == -1)
                {
                    break;
                }
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("controller journal " + path + ": " + ex.getMessage(), ex);
        }
        lines = number;
        compactAt = COMPACTION_SLACK + 2 * read;
    }

    private static ObjectNode parse(final byte[] line, final int length)
    {
        if (length == 0 || line[0] != '{')
        {
            return null;
        }
        try
        {
            return JsonHttp.MAPPER.readTree(line, 0, length) instanceof ObjectNode object ? object : null;
        }
        catch (final IOException | RuntimeException ex)
        {
            return null;
        }
    }

    /** Appends one record and forces it to disk. */
    void append(final ObjectNode record)
    {
        try
        {
            if (closed)
            {
                throw new IOException("closed");
            }
            if (channel == null || !channel.isOpen())
            {
                channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND);
                restrict(path);
            }
            final ByteBuffer bytes = ByteBuffer.wrap((JsonHttp.MAPPER.writeValueAsString(record) + "\n")
                .getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining())
            {
                channel.write(bytes);
            }
            channel.force(false);
            lines++;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("controller journal " + path + ": cannot append: " + ex.getMessage(), ex);
        }
    }

    /**
     * Compacts to {@code snapshot}'s records if enough lines were appended since the last compaction; a failure is
     * logged and the compaction retried after another {@link #COMPACTION_SLACK} lines or more, never thrown: the
     * journal as it stands is whole and appends go on.
     *
     * @return whether it compacted.
     */
    boolean compactIfDue(final Supplier<List<ObjectNode>> snapshot)
    {
        return lines >= compactAt && tryCompact(snapshot.get());
    }

    /** Compacts now (recovery); a failure is logged, not thrown. */
    boolean tryCompact(final List<ObjectNode> records)
    {
        try
        {
            compact(records);
            if (failedCompactions > 0)
            {
                LOGGER.log(System.Logger.Level.INFO, () -> "controller journal " + path + ": compacted again ("
                    + records.size() + " lines)");
            }
            failedCompactions = 0;
            return true;
        }
        catch (final UncheckedIOException ex)
        {
            failedCompactions++;
            compactAt = lines + Math.max(COMPACTION_SLACK, records.size());
            final long retry = compactAt;
            LOGGER.log(System.Logger.Level.WARNING, () -> ex.getMessage() + "; the journal stays as it is ("
                + lines + " lines, appends go on) and compaction is tried again at " + retry + " lines");
            return false;
        }
    }

    /**
     * Replaces the journal with {@code records} (the live state), atomically: the old file stays the journal, open
     * for appends, until the new one is whole on disk and renamed over it.
     */
    void compact(final List<ObjectNode> records)
    {
        final Path temporary = path.resolveSibling(path.getFileName() + ".tmp");
        try
        {
            try (FileChannel out = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING))
            {
                restrict(temporary);
                for (final ObjectNode record : records)
                {
                    final ByteBuffer bytes = ByteBuffer.wrap((JsonHttp.MAPPER.writeValueAsString(record) + "\n")
                        .getBytes(StandardCharsets.UTF_8));
                    while (bytes.hasRemaining())
                    {
                        out.write(bytes);
                    }
                }
                out.force(true);
            }
            Files.move(temporary, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final IOException ex)
        {
            try
            {
                Files.deleteIfExists(temporary);
            }
            catch (final IOException ignored)
            {
                // not ours to fix: the next compaction truncates it or fails the same way
            }
            throw new UncheckedIOException("controller journal " + path + ": cannot compact: " + ex.getMessage(), ex);
        }
        // Renamed: the old channel writes to the replaced file now, so it is closed; append reopens the new one if
        // this cannot.
        final FileChannel old = channel;
        channel = null;
        closeQuietly(old);
        lines = records.size();
        compactAt = COMPACTION_SLACK + 2L * records.size();
        forceDirectory();
        try
        {
            channel = FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller journal " + path + ": cannot reopen after"
                + " compacting: " + ex.getMessage() + "; the next append tries again");
        }
    }

    private void forceDirectory()
    {
        final Path directory = path.toAbsolutePath().getParent();
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ))
        {
            dir.force(true);
        }
        catch (final IOException | UnsupportedOperationException ignored)
        {
            // some file systems cannot sync a directory; the rename is as durable as they make it
        }
    }

    /** Readable and writable by the controller's user only: the lines hold the ranks' JOIN credentials. */
    private static void restrict(final Path file) throws IOException
    {
        if (Files.getFileStore(file).supportsFileAttributeView(PosixFileAttributeView.class))
        {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
    }

    private static void closeQuietly(final FileChannel channel)
    {
        if (channel == null)
        {
            return;
        }
        try
        {
            channel.close();
        }
        catch (final IOException ignored)
        {
            // closing
        }
    }

    @Override
    public void close()
    {
        closed = true;
        closeQuietly(channel);
        channel = null;
    }
}
