package org.inagg.services.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;

/**
 * The per-host agent: accepts local ranks on a Unix-domain socket, groups them into jobs ({@link JobSession}) by the
 * job key of their hello, and runs each job's rounds when the ranks ring. One thread, blocked in a {@link Selector}
 * while nothing happens (no spinning); large rounds borrow {@link HostAgentContext#reducerThreads()} threads to sum.
 * Its files live in a {@link PrivateDirectory} under an {@link AgentLock}; a connection of another local user is
 * refused on accept ({@link PeerPolicy}); job files have unguessable names.
 * <pre>{@code
 * try (HostAgent agent = HostAgent.launch(new HostAgentContext().name("node0")))
 * {
 *     agent.awaitClose();   // or embed: the agent runs on its own thread until close()
 * }
 * }</pre>
 */
public final class HostAgent implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(HostAgent.class.getName());

    private final HostAgentContext context;
    private final AgentListener listener;
    private final Selector selector;
    private final InHostReducer reducer;
    private final HostAgentCounters counters;
    private final Map<String, JobSession> sessions = new HashMap<>();
    /** Jobs that ended before all their local ranks joined, and why (the newest 1024): a late rank is told so. */
    private final Map<String, String> endedEarly = new LinkedHashMap<>()
    {
        @Override
        protected boolean removeEldestEntry(final Map.Entry<String, String> eldest)
        {
            return size() > 1024;
        }
    };
    private final Queue<Runnable> posted = new ConcurrentLinkedQueue<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread thread;
    private final PrivateDirectory directory;
    private final AgentLock lock;
    private final SecureRandom random = new SecureRandom();
    private volatile boolean running = true;
    private long idleSinceNs = System.nanoTime();

    private HostAgent(final HostAgentContext context)
    {
        this.context = context.conclude();
        this.counters = new HostAgentCounters(context.counters(), context.name());
        this.directory = PrivateDirectory.open(context.directory(), allowedGroup(context.allowGroup()));
        this.lock = AgentLock.acquire(directory, context.name(), context.socketPath());
        for (final Path leftover : lock.removed())
        {
            LOG.log(Level.INFO, "agent {0}: removed {1}, left by a dead agent of that name", context.name(), leftover);
        }
        this.reducer = new InHostReducer(context.reducerThreads());
        try
        {
            listener = new AgentListener(context.name(), context.socketPath(), directory,
                new PeerPolicy(directory.owner(), directory.allowedGroup()), counters);
            selector = Selector.open();
            listener.register(selector);
        }
        catch (final IOException ex)
        {
            reducer.close();
            lock.close();
            throw new UncheckedIOException("agent " + context.name() + ": cannot listen on " + context.socketPath()
                + ": " + ex.getMessage(), ex);
        }
        InHostReducer.warmUp();
        thread = new Thread(this::run, "inagg-agent-" + context.name());
    }

    /** Starts an agent on a thread of its own. */
    public static HostAgent launch(final HostAgentContext context)
    {
        final HostAgent agent = new HostAgent(context);
        agent.thread.start();
        LOG.log(Level.INFO, "agent {0}: listening on {1}, shared memory in {2}, {3} bytes a slot, {4} reducer "
                + "thread(s){5}", context.name(), context.socketPath(), context.directory(), context.slotBytes(),
            context.reducerThreads(), context.controller() != null ? ", multi-host jobs through the controller at "
                + context.controller() : context.switchAddress() == null ? ", single-host jobs only"
                : ", multi-host jobs through the switch at " + context.switchAddress());
        return agent;
    }

    private static GroupPrincipal allowedGroup(final String name)
    {
        if (name == null)
        {
            return null;
        }
        try
        {
            return java.nio.file.FileSystems.getDefault().getUserPrincipalLookupService()
                .lookupPrincipalByGroupName(name);
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("--allow-group " + name + ": no such group (" + ex.getMessage() + ")",
                ex);
        }
    }

    public HostAgentContext context()
    {
        return context;
    }

    /** Jobs in progress (tests). */
    public int activeJobs()
    {
        final int[] count = new int[1];
        final CountDownLatch done = new CountDownLatch(1);
        posted.add(() ->
        {
            count[0] = sessions.size();
            done.countDown();
        });
        selector.wakeup();
        try
        {
            if (!done.await(10, java.util.concurrent.TimeUnit.SECONDS))
            {
                throw new IllegalStateException("agent " + context.name() + " did not answer within 10 s (stopped?)");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return count[0];
    }

    /** Blocks until the agent stopped (closed, or idle past {@link HostAgentContext#idleExit()}). */
    public void awaitClose() throws InterruptedException
    {
        stopped.await();
    }

    private void run()
    {
        try
        {
            final long idleExitNs = context.idleExit().toNanos();
            while (running)
            {
                selector.select(selectTimeoutMs());
                Runnable task;
                while ((task = posted.poll()) != null)
                {
                    task.run();
                }
                final Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext())
                {
                    final SelectionKey key = keys.next();
                    keys.remove();
                    if (!key.isValid())
                    {
                        continue;
                    }
                    if (key.isAcceptable())
                    {
                        accept();
                    }
                    else if (key.isReadable())
                    {
                        read(key, (RankConnection)key.attachment());
                    }
                }
                final long now = System.nanoTime();
                for (final JobSession session : sessions.values())
                {
                    session.expire(now);
                }
                sessions.values().removeIf(this::retire);
                // The server's key plus one per open rank connection (a failed job closes its ranks' channels, which
                // cancels their keys; the next select drops them).
                if (selector.keys().size() > 1 || !sessions.isEmpty())
                {
                    idleSinceNs = System.nanoTime();
                }
                else if (idleExitNs > 0 && System.nanoTime() - idleSinceNs > idleExitNs)
                {
                    LOG.log(Level.INFO, "agent {0}: no job for {1}, exiting", context.name(), context.idleExit());
                    running = false;
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.log(Level.ERROR, "agent " + context.name() + ": stopped by an error", ex);
        }
        finally
        {
            shutdown();
        }
    }

    /** Up to 1 s, less when a job's round times out sooner ({@link JobSession#deadlineNs()}). */
    private long selectTimeoutMs()
    {
        long timeoutMs = 1000;
        final long now = System.nanoTime();
        for (final JobSession session : sessions.values())
        {
            final long deadline = session.deadlineNs();
            if (deadline != Long.MAX_VALUE)
            {
                timeoutMs = Math.min(timeoutMs, Math.max(1, (deadline - now) / 1_000_000 + 1));
            }
        }
        return timeoutMs;
    }

    private void accept() throws IOException
    {
        final SocketChannel channel = listener.accept();
        if (channel != null)
        {
            channel.register(selector, SelectionKey.OP_READ, new RankConnection(channel));
        }
    }

    private void read(final SelectionKey key, final RankConnection connection)
    {
        final ByteBuffer buffer = connection.session == null ? connection.hello : connection.doorbells;
        int read;
        try
        {
            read = connection.channel.read(buffer);
        }
        catch (final IOException ex)
        {
            read = -1;
        }
        if (read < 0)
        {
            disconnect(key, connection);
            return;
        }
        if (connection.session == null)
        {
            if (!connection.hello.hasRemaining())
            {
                connection.hello.flip();
                onHello(key, connection);
            }
            return;
        }
        buffer.flip();
        final JobSession session = connection.session;
        while (buffer.hasRemaining() && !connection.closed)
        {
            final byte doorbell = buffer.get();
            if (doorbell == AgentProtocol.DOORBELL_REQUEST)
            {
                session.onRequest(connection);
            }
            else if (doorbell == AgentProtocol.DOORBELL_PROGRESS)
            {
                session.onProgress(connection);
            }
            else if (doorbell == AgentProtocol.DOORBELL_BYE)
            {
                connection.bye = true;
            }
            else
            {
                session.fail(AgentProtocol.ERROR_BAD_REQUEST, connection.describe() + " rang an unknown doorbell "
                    + (doorbell & 0xFF));
            }
        }
        buffer.clear();
        if (connection.closed)
        {
            key.cancel();
        }
    }

    private void disconnect(final SelectionKey key, final RankConnection connection)
    {
        key.cancel();
        if (connection.session != null)
        {
            connection.session.onLeave(connection);
        }
        else
        {
            connection.close();
        }
    }

    private void onHello(final SelectionKey key, final RankConnection connection)
    {
        Hello hello = null;
        try
        {
            hello = RequestDecoder.decodeHello(connection.hello);
            if (context.jobKey() != null && !context.jobKey().equals(hello.jobKey()))
            {
                throw new AgentProtocolException(AgentProtocol.ERROR_JOB_MISMATCH, "agent " + context.name()
                    + " on " + context.socketPath() + " serves job " + context.jobKey() + " only, not job "
                    + hello.jobKey() + "; start another agent (another --name) or point INAGG_AGENT at yours");
            }
            if (hello.hosts() > 1 && context.switchAddress() == null && context.controller() == null)
            {
                throw new AgentProtocolException(AgentProtocol.ERROR_BAD_REQUEST, "job " + hello.jobKey()
                    + " spans " + hello.hosts() + " hosts but agent " + context.name()
                    + " was started without --switch or a controller (INAGG_CONTROLLER)");
            }
            JobSession session = sessions.get(hello.jobKey());
            if (session != null && retire(session))
            {
                // Its last rank left earlier in this same pass over the selected keys.
                sessions.remove(hello.jobKey());
                session = null;
            }
            final String ended = endedEarly.get(hello.jobKey());
            if (ended != null)
            {
                throw new AgentProtocolException(AgentProtocol.ERROR_RANK_LEFT, ended);
            }
            if (session == null)
            {
                final Path file = directory.path().resolve(AgentLock.filePrefix(context.name())
                    + HexFormat.of().formatHex(unguessable()) + AgentLock.FILE_SUFFIX);
                final NetworkStage network = hello.hosts() > 1 ? new NetworkStage(context, hello) : null;
                try
                {
                    session = new JobSession(hello, file, context.slotBytes(),
                        context.chunkBytesFor(hello.localWorldSize()),
                        context.networkChunkBytes(), reducer, network,
                        counters,
                        this::post, context.collectiveTimeout());
                }
                catch (final RuntimeException ex)
                {
                    if (network != null)
                    {
                        network.close();
                    }
                    throw ex;
                }
                if (directory.allowedGroup() != null)
                {
                    share(session);
                }
                sessions.put(hello.jobKey(), session);
            }
            session.join(connection, hello);
            reply(connection, AgentProtocol.OK, session.region().path().toString(), session.region().slotCapacity(),
                "");
        }
        catch (final AgentProtocolException ex)
        {
            refuse(key, connection, ex.code(), ex.getMessage(), hello);
        }
        catch (final RuntimeException ex)
        {
            refuse(key, connection, AgentProtocol.ERROR_SHM_FULL, "agent " + context.name()
                + " cannot create the job's shared memory: " + ex.getMessage(), hello);
        }
    }

    /** Whether {@code session} is over; one that ended before all its ranks joined is remembered in endedEarly. */
    private boolean retire(final JobSession session)
    {
        if (!session.isClosed())
        {
            return false;
        }
        if (session.endedEarly() != null)
        {
            endedEarly.put(session.key, session.endedEarly());
        }
        return true;
    }

    /** 16 random bytes: a job file's name nobody can guess (and so create first, or open by name). */
    private byte[] unguessable()
    {
        final byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return bytes;
    }

    private void share(final JobSession session)
    {
        try
        {
            directory.share(session.region().path());
        }
        catch (final IOException ex)
        {
            session.fail(AgentProtocol.ERROR_SHM_FULL, "cannot give group " + directory.allowedGroup().getName()
                + " access to " + session.region().path() + ": " + ex.getMessage());
            throw new UncheckedIOException(ex);
        }
    }

    private void refuse(final SelectionKey key, final RankConnection connection, final int code, final String message,
        final Hello hello)
    {
        counters.hellosRefused.increment();
        LOG.log(Level.WARNING, "agent {0}: refused {1}: {2}", context.name(),
            hello == null ? "a rank" : hello.toString(), message);
        reply(connection, code, "", 0, message);
        key.cancel();
        connection.close();
    }

    private static void reply(final RankConnection connection, final int status, final String path,
        final long capacity, final String message)
    {
        final ByteBuffer frame = ByteBuffer.allocate(AgentProtocol.REPLY_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        final byte[] p = path.getBytes(StandardCharsets.UTF_8);
        final byte[] m = Utf8.truncate(message, AgentProtocol.MESSAGE_BYTES);
        frame.putInt(0, status).putInt(4, AgentProtocol.VERSION).putLong(8, capacity)
            .putInt(16, p.length).putInt(20, m.length)
            .put(AgentProtocol.REPLY_PATH_OFFSET, p, 0, Math.min(p.length, AgentProtocol.PATH_BYTES))
            .put(AgentProtocol.REPLY_MESSAGE_OFFSET, m);
        try
        {
            while (frame.hasRemaining())
            {
                if (connection.channel.write(frame) == 0)
                {
                    Thread.onSpinWait(); // a fresh socket's buffer holds 512 bytes: does not happen in practice
                }
            }
        }
        catch (final IOException ignored)
        {
            // The rank went away before reading the reply: its disconnect is handled by the selector.
        }
    }

    private void post(final Runnable task)
    {
        posted.add(task);
        selector.wakeup();
    }

    private void shutdown()
    {
        for (final JobSession session : sessions.values())
        {
            session.fail(AgentProtocol.ERROR_RANK_LEFT, "agent " + context.name() + " is shutting down");
        }
        sessions.clear();
        try
        {
            selector.close();
            listener.close();
        }
        catch (final IOException ignored)
        {
            // Best effort on the way out.
        }
        reducer.close();
        lock.close();
        LOG.log(Level.INFO, "agent {0}: stopped", context.name());
        stopped.countDown();
    }

    /** Stops the agent: jobs in progress fail with a message saying so; the socket and files are removed. */
    @Override
    public void close()
    {
        running = false;
        selector.wakeup();
        if (Thread.currentThread() != thread)
        {
            try
            {
                thread.join(10_000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
