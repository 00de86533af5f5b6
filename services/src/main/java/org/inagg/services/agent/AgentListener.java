package org.inagg.services.agent;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The {@link HostAgent}'s listening Unix-domain socket: bound with its {@link PrivateDirectory}'s file rights, and
 * refusing on accept a connection of a user its {@link PeerPolicy} does not allow (counted, and logged one line a second
 * at most). Used on the agent's thread only.
 */
final class AgentListener implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(HostAgent.class.getName());

    private final String name;
    private final Path path;
    private final ServerSocketChannel server;
    private final PeerPolicy peers;
    private final HostAgentCounters counters;
    private long lastRefusalLogNs;
    private long refusalsNotLogged;

    AgentListener(final String name, final Path path, final PrivateDirectory directory, final PeerPolicy peers,
        final HostAgentCounters counters) throws IOException
    {
        this.name = name;
        this.path = path;
        this.peers = peers;
        this.counters = counters;
        this.server = bind(path, directory);
    }

    /** Switches the socket to non-blocking and has {@code selector} report its connections. */
    void register(final Selector selector) throws IOException
    {
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
    }

    /**
     * Binds the socket (removing a stale one nobody answers on) and gives it the directory's file rights before it has
     * its name: bound under a temporary name, chmod-ed, then renamed, so that no rank ever finds it with the process's
     * umask rights (a rank that checked it in that window refused it).
     */
    private static ServerSocketChannel bind(final Path path, final PrivateDirectory directory) throws IOException
    {
        if (Files.exists(path))
        {
            try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(path)))
            {
                throw new IOException("another agent is listening on " + path + " (connect it with INAGG_AGENT="
                    + path + ", or give this one another --name)");
            }
            catch (final IOException ex)
            {
                if (ex.getMessage() != null && ex.getMessage().startsWith("another agent"))
                {
                    throw ex;
                }
                Files.deleteIfExists(path); // a stale socket of an agent that died
            }
        }
        final ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try
        {
            // Shorter than any socket name (a Unix socket path has at most 107 bytes), in the same private directory.
            final Path unnamed = path.resolveSibling(".b" + ProcessHandle.current().pid());
            Files.deleteIfExists(unnamed);
            channel.bind(UnixDomainSocketAddress.of(unnamed));
            try
            {
                directory.share(unnamed);
                Files.move(unnamed, path, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            }
            finally
            {
                Files.deleteIfExists(unnamed);
            }
        }
        catch (final IOException ex)
        {
            channel.close();
            throw ex;
        }
        return channel;
    }

    /**
     * Accepts one pending connection: the channel (non-blocking) of an allowed peer, or null when none was pending
     * or the peer was refused (its channel closed).
     */
    SocketChannel accept() throws IOException
    {
        final SocketChannel channel = server.accept();
        if (channel == null)
        {
            return null;
        }
        final UnixDomainPrincipal peer;
        try
        {
            peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
        }
        catch (final IOException ex)
        {
            channel.close(); // who it was cannot be told: not served, and not worth stopping the agent for
            counters.peersRefused.increment();
            return null;
        }
        if (!peers.allows(peer))
        {
            channel.close();
            counters.peersRefused.increment();
            logRefusal(peer);
            return null;
        }
        channel.configureBlocking(false);
        return channel;
    }

    /** One line a second at most, however fast another user connects; the counter has them all. */
    private void logRefusal(final UnixDomainPrincipal peer)
    {
        final long now = System.nanoTime();
        if (lastRefusalLogNs != 0 && now - lastRefusalLogNs < 1_000_000_000L)
        {
            refusalsNotLogged++;
            return;
        }
        LOG.log(Level.WARNING, "agent {0}: refused a connection of {1} on {2}: only {3} may use this agent{4}",
            name, PeerPolicy.describe(peer), path, peers.allowed(),
            refusalsNotLogged == 0 ? "" : " (" + refusalsNotLogged + " more refused since the last such line)");
        lastRefusalLogNs = now;
        refusalsNotLogged = 0;
    }

    /** Closes the socket and removes its file. */
    @Override
    public void close() throws IOException
    {
        server.close();
        Files.deleteIfExists(path);
    }
}
