package org.inagg.services.controller;

import java.io.IOException;
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
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.JsonHttp;

/**
 * The controller's journal: one JSON object per line, each written and fsync'd before the change it records is
 * answered or reaches a switch. A line is a job's whole state after a change ({@code "type": "job"}) or its end
 * ({@code "type": "freed"}); replay keeps the last line per job name. {@link #compact} rewrites the file with the live
 * jobs only (a temporary file, fsync'd, renamed over the journal). A torn last line (a crash mid-write) is skipped.
 * Lease renewals are not journaled: after a restart every lease starts afresh. The journal holds the ranks' JOIN
 * credentials (docs/security.md), so it is the controller's user's alone (mode 0600, where the file system has modes).
 */
final class Journal implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(Journal.class.getName());

    private final Path path;
    private FileChannel channel;
    private int lines;

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

    /** Readable and writable by the controller's user only: the lines hold the ranks' JOIN credentials. */
    private static void restrict(final Path file) throws IOException
    {
        if (Files.getFileStore(file).supportsFileAttributeView(PosixFileAttributeView.class))
        {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
    }

    Path path()
    {
        return path;
    }

    /** Lines appended since the last compaction. */
    int lines()
    {
        return lines;
    }

    /** The journal's records, oldest first, a torn or unreadable line skipped (and logged). */
    List<ObjectNode> replay()
    {
        final List<ObjectNode> records = new ArrayList<>();
        final List<String> text;
        try
        {
            text = Files.readAllLines(path, StandardCharsets.UTF_8);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("controller journal " + path + ": " + ex.getMessage(), ex);
        }
        for (int i = 0; i < text.size(); i++)
        {
            final String line = text.get(i);
            if (line.isBlank())
            {
                continue;
            }
            try
            {
                final JsonNode node = JsonHttp.MAPPER.readTree(line);
                if (node instanceof ObjectNode object)
                {
                    records.add(object);
                    continue;
                }
            }
            catch (final IOException ignored)
            {
                // fall through: logged below
            }
            final int number = i + 1;
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller journal " + path + ": line " + number
                + " is not a JSON object (torn write?); skipped");
        }
        lines = records.size();
        return records;
    }

    /** Appends one record and forces it to disk. */
    void append(final ObjectNode record)
    {
        try
        {
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

    /** Replaces the journal with {@code records} (the live state), atomically. */
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
            channel.close();
            Files.move(temporary, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            channel = FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            lines = records.size();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("controller journal " + path + ": cannot compact: " + ex.getMessage(), ex);
        }
    }

    @Override
    public void close()
    {
        try
        {
            channel.close();
        }
        catch (final IOException ignored)
        {
            // closing
        }
    }
}
