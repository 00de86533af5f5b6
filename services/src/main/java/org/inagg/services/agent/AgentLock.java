package org.inagg.services.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * One agent name's lock in its {@link PrivateDirectory}: {@code inagg-agent-<name>.lock}, held (an {@code fcntl} lock)
 * while the agent lives; the kernel drops it when the process dies, however it died. Whoever takes it knows the agent
 * that ran before under that name is dead, so its leftovers (its socket, its jobs' shared-memory files, which a
 * SIGKILLed agent never removed) can go; whoever cannot take it is refused: a live agent owns the name. (A stale
 * socket is the agent's to remove when it binds: nobody answers on it.)
 */
final class AgentLock implements AutoCloseable
{
    /** Shared-memory files of agent {@code name}: {@code inagg-<name>+<random>.shm} ('+' is not allowed in a name). */
    static final String FILE_SEPARATOR = "+";
    static final String FILE_SUFFIX = ".shm";

    private final Path path;
    private final FileChannel channel;
    private final FileLock lock;
    private final List<Path> removed;

    private AgentLock(final Path path, final FileChannel channel, final FileLock lock, final List<Path> removed)
    {
        this.path = path;
        this.channel = channel;
        this.lock = lock;
        this.removed = removed;
    }

    /** Prefix of the shared-memory files of agent {@code name}. */
    static String filePrefix(final String name)
    {
        return "inagg-" + name + FILE_SEPARATOR;
    }

    /**
     * Takes the lock of agent {@code name} in {@code directory}, then removes the shared-memory files a dead agent of
     * that name left. {@code socket} only names the agent in the refusal.
     *
     * @throws IllegalStateException when a live agent holds it.
     */
    static AgentLock acquire(final PrivateDirectory directory, final String name, final Path socket)
    {
        final Path path = directory.path().resolve("inagg-agent-" + name + ".lock");
        FileChannel channel = null;
        try
        {
            channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            FileLock lock;
            try
            {
                lock = channel.tryLock();
            }
            catch (final OverlappingFileLockException ex)
            {
                lock = null; // an agent of this JVM holds it
            }
            if (lock == null)
            {
                final String holder = new String(Files.readAllBytes(path), StandardCharsets.US_ASCII).trim();
                channel.close();
                throw new IllegalStateException("another agent is listening on " + socket + ": agent " + name
                    + " (pid " + (holder.isEmpty() ? "unknown" : holder) + ") holds " + path + " (connect it with "
                    + "INAGG_AGENT=" + socket + ", or give this one another --name)");
            }
            directory.share(path);
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)),
                0);
            return new AgentLock(path, channel, lock, removeLeftovers(directory.path(), name));
        }
        catch (final IOException ex)
        {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot lock " + path + ": " + ex, ex);
        }
        catch (final RuntimeException ex)
        {
            closeQuietly(channel);
            throw ex;
        }
    }

    private static List<Path> removeLeftovers(final Path directory, final String name) throws IOException
    {
        final List<Path> removed = new ArrayList<>();
        final String prefix = filePrefix(name);
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, prefix + "*" + FILE_SUFFIX))
        {
            for (final Path file : files)
            {
                if (Files.deleteIfExists(file))
                {
                    removed.add(file);
                }
            }
        }
        return removed;
    }

    private static void closeQuietly(final FileChannel channel)
    {
        if (channel != null)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ignored)
            {
                // Closing the lock file of a failed start: the failure is what gets reported.
            }
        }
    }

    Path path()
    {
        return path;
    }

    /** The shared-memory files the dead agent before left and this one removed. */
    List<Path> removed()
    {
        return removed;
    }

    /** Releases the lock; the file stays (removing it would let two agents lock two different files). */
    @Override
    public void close()
    {
        try
        {
            lock.release();
        }
        catch (final IOException ignored)
        {
            // Closing the channel below drops it anyway.
        }
        closeQuietly(channel);
    }
}
