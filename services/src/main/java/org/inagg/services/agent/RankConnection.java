package org.inagg.services.agent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** One local rank's connection to the agent: its hello, then its doorbells; the job it belongs to once it joined. */
final class RankConnection
{
    final SocketChannel channel;
    final ByteBuffer hello = ByteBuffer.allocate(AgentProtocol.HELLO_LENGTH);
    final ByteBuffer doorbells = ByteBuffer.allocate(64);
    private final ByteBuffer complete = ByteBuffer.allocate(1);
    JobSession session;
    Hello identity;
    /** Sequence of the last round completed for this rank. */
    long completed;
    /** The request of the round in progress, null between rounds. */
    CollectiveRequest pending;
    /**
     * Elements of the pending round this rank has copied in: its descriptor's ready count, checked, up to what its
     * doorbells announced ({@link RequestDecoder#announcedReady}).
     */
    long ready;
    /** Doorbells of the pending round: its request and each progress doorbell since. */
    long bells;
    boolean bye;
    boolean closed;

    RankConnection(final SocketChannel channel)
    {
        this.channel = channel;
    }

    /** Rings the rank's doorbell; false when the rank is gone. */
    boolean ringComplete()
    {
        return ring(AgentProtocol.DOORBELL_COMPLETE);
    }

    /** Rings {@code doorbell} ({@link AgentProtocol#DOORBELL_COMPLETE} or {@link AgentProtocol#DOORBELL_DONE}). */
    boolean ring(final byte doorbell)
    {
        if (closed)
        {
            return false;
        }
        complete.clear();
        complete.put(doorbell).flip();
        try
        {
            return channel.write(complete) == 1;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    void close()
    {
        closed = true;
        try
        {
            channel.close();
        }
        catch (final IOException ignored)
        {
            // Closing a Unix socket whose peer vanished: nothing to do.
        }
    }

    String describe()
    {
        return identity == null ? "a rank (before its hello)" : "local rank " + identity.localRank() + " (rank "
            + identity.rank() + ", pid " + identity.pid() + ")";
    }
}
