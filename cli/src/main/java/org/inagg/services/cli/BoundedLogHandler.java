package org.inagg.services.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.logging.ErrorManager;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;

/**
 * A log file that never outgrows twice its cap: past {@code maxBytes} it becomes {@code <file>.1} (replacing the one
 * before) and a new one starts. Created mode 0600 and never opened through a link: a daemon's log in a tmpfs
 * ({@code /dev/shm}) is memory nobody gives back, and may hold job keys and paths (docs/security.md).
 */
final class BoundedLogHandler extends Handler
{
    private final Path path;
    private final Path previous;
    private final long maxBytes;
    private FileChannel channel;
    private OutputStream out;

    BoundedLogHandler(final Path path, final long maxBytes)
    {
        if (maxBytes < 1024)
        {
            throw new IllegalArgumentException("log cap " + maxBytes + " bytes must be at least 1024");
        }
        this.path = path;
        this.previous = path.resolveSibling(path.getFileName() + ".1");
        this.maxBytes = maxBytes;
        setFormatter(new SimpleFormatter());
        try
        {
            open();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot open the log " + path + ": " + ex, ex);
        }
    }

    /** Sends the process's log records (System.Logger over java.util.logging) to {@code path} instead of stderr. */
    static BoundedLogHandler install(final Path path, final long maxBytes)
    {
        final BoundedLogHandler handler = new BoundedLogHandler(path, maxBytes);
        final java.util.logging.Logger root = java.util.logging.LogManager.getLogManager().getLogger("");
        for (final Handler existing : root.getHandlers())
        {
            if (existing instanceof java.util.logging.ConsoleHandler)
            {
                root.removeHandler(existing);
            }
        }
        root.addHandler(handler);
        return handler;
    }

    private void open() throws IOException
    {
        channel = FileChannel.open(path, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        out = Channels.newOutputStream(channel);
    }

    @Override
    public synchronized void publish(final LogRecord record)
    {
        if (!isLoggable(record) || out == null)
        {
            return;
        }
        try
        {
            final byte[] line = getFormatter().format(record).getBytes(StandardCharsets.UTF_8);
            // The file's size, not a count: the process's standard output may share the file (a rank that starts the
            // agent sends it there); a few lines an hour, an fstat each is nothing.
            final long size = channel.size();
            if (size > 0 && size + line.length > maxBytes)
            {
                out.close();
                out = null;
                Files.move(path, previous, StandardCopyOption.REPLACE_EXISTING);
                open();
            }
            out.write(line);
            out.flush();
        }
        catch (final IOException ex)
        {
            reportError("cannot write the log " + path, ex, ErrorManager.WRITE_FAILURE);
        }
    }

    @Override
    public synchronized void flush()
    {
        // Every record is flushed as it is written.
    }

    @Override
    public synchronized void close()
    {
        if (out != null)
        {
            try
            {
                out.close();
            }
            catch (final IOException ex)
            {
                reportError("cannot close the log " + path, ex, ErrorManager.CLOSE_FAILURE);
            }
            out = null;
        }
    }
}
