package org.inagg.services.agent;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** A rank in Java, as inagg_torch does it in Python: hello, map the job's file, write a request, ring, read back. */
final class TestRank implements AutoCloseable
{
    final SocketChannel channel;
    final int status;
    final String message;
    final Path file;
    final long capacity;
    private final int localRank;
    private Arena arena;
    private MemorySegment mapping;
    private long sequence;

    TestRank(final Path socket, final int rank, final int world, final int localRank, final int localWorld,
        final String key) throws IOException
    {
        this(socket, rank, world, localRank, localWorld, key, 0);
    }

    TestRank(final Path socket, final int rank, final int world, final int localRank, final int localWorld,
        final String key, final int collectiveTimeoutMs) throws IOException
    {
        this.localRank = localRank;
        channel = SocketChannel.open(UnixDomainSocketAddress.of(socket));
        channel.write(hello(AgentProtocol.VERSION, rank, world, localRank, localWorld, key)
            .putInt(AgentProtocol.HELLO_TIMEOUT_OFFSET, collectiveTimeoutMs));
        final ByteBuffer reply = ByteBuffer.allocate(AgentProtocol.REPLY_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        while (reply.hasRemaining() && channel.read(reply) >= 0)
        {
            // until the whole reply is in
        }
        status = reply.getInt(0);
        capacity = reply.getLong(8);
        final byte[] path = new byte[reply.getInt(16)];
        reply.get(AgentProtocol.REPLY_PATH_OFFSET, path);
        final byte[] text = new byte[reply.getInt(20)];
        reply.get(AgentProtocol.REPLY_MESSAGE_OFFSET, text);
        message = new String(text, StandardCharsets.UTF_8);
        file = status == AgentProtocol.OK ? Path.of(new String(path, StandardCharsets.UTF_8)) : null;
        if (file != null)
        {
            arena = Arena.ofShared();
            try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                mapping = fc.map(FileChannel.MapMode.READ_WRITE, 0, fc.size(), arena);
            }
        }
    }

    static ByteBuffer hello(final int version, final int rank, final int world, final int localRank,
        final int localWorld, final String key)
    {
        final byte[] k = key.getBytes(StandardCharsets.UTF_8);
        final ByteBuffer b = ByteBuffer.allocate(AgentProtocol.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(AgentProtocol.HELLO_MAGIC).putInt(version).putInt(rank).putInt(world).putInt(localRank)
            .putInt(localWorld).putInt(0).putInt(1).putInt(0).putInt(4242).putInt(k.length).put(k);
        return b.clear();
    }

    MemorySegment data()
    {
        final long offset = mapping.get(SharedRegion.LONG, 32) + localRank * capacity;
        return mapping.asSlice(offset, capacity);
    }

    MemorySegment result()
    {
        return mapping.asSlice(mapping.get(SharedRegion.LONG, 40), capacity);
    }

    MemorySegment header()
    {
        return mapping.asSlice(0, SharedRegion.HEADER_LENGTH);
    }

    /** Writes the request and rings; {@link #awaitCompletion()} then waits for the agent. */
    void request(final int op, final int dtype, final long count) throws IOException
    {
        final int chunk = chunkElements();
        if (chunk == 0 || op != AgentProtocol.OP_SUM && op != AgentProtocol.OP_AVG || count <= chunk)
        {
            gatherRequest(op, dtype, count, 0, 0);
            return;
        }
        // As a rank does (inagg_torch._agent): the request with the first chunk, then a doorbell per next chunk, each
        // announcing one more (RequestDecoder.announcedReady).
        write(op, dtype, count, 0, 0, chunk);
        for (long ready = 2L * chunk; ready < count + chunk; ready += chunk)
        {
            progress(Math.min(count, ready));
        }
    }

    /** A request with a gather range (bytes of the round this rank gives: {@link AgentProtocol#OP_GATHER}). */
    void gatherRequest(final int op, final int dtype, final long count, final long from, final long length)
        throws IOException
    {
        write(op, dtype, count, from, length, count);
    }

    /** A request rung with only {@code ready} elements copied in ({@link #progress} says the rest). */
    void chunkedRequest(final int op, final int dtype, final long count, final long ready) throws IOException
    {
        write(op, dtype, count, 0, 0, ready);
    }

    /** Says that {@code ready} elements are copied in and rings {@link AgentProtocol#DOORBELL_PROGRESS}. */
    void progress(final long ready) throws IOException
    {
        descriptor().set(SharedRegion.LONG, SharedRegion.READY_ELEMENTS, ready);
        channel.write(ByteBuffer.wrap(new byte[] {AgentProtocol.DOORBELL_PROGRESS}));
    }

    /** The agent's chunk size from the header (0: whole rounds). */
    int chunkElements()
    {
        return mapping.get(SharedRegion.INT, 60);
    }

    /** The agent's network chunk bytes from the header (0: rounds go through the switch whole). */
    int networkChunkBytes()
    {
        return mapping.get(SharedRegion.INT, 20);
    }

    private void write(final int op, final int dtype, final long count, final long from, final long length,
        final long ready) throws IOException
    {
        final MemorySegment d = mapping.asSlice(SharedRegion.HEADER_LENGTH
            + (long)localRank * SharedRegion.DESCRIPTOR_LENGTH, SharedRegion.DESCRIPTOR_LENGTH);
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_SEQUENCE, ++sequence);
        d.set(SharedRegion.INT, SharedRegion.REQUEST_OP, op);
        d.set(SharedRegion.INT, SharedRegion.REQUEST_DTYPE, dtype);
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_COUNT, count);
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_TOTAL, count);
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_GATHER_FROM, from);
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_GATHER_LENGTH, length);
        d.set(SharedRegion.LONG, SharedRegion.READY_ELEMENTS, ready);
        channel.write(ByteBuffer.wrap(new byte[] {AgentProtocol.DOORBELL_REQUEST}));
    }

    /** Waits for the doorbell; returns the status, the message in {@link #lastMessage()}. */
    int awaitCompletion() throws IOException
    {
        final ByteBuffer bell = ByteBuffer.allocate(1);
        if (channel.read(bell) != 1 || bell.get(0) != AgentProtocol.DOORBELL_COMPLETE)
        {
            throw new IOException("no completion doorbell");
        }
        final MemorySegment d = descriptor();
        if (d.get(SharedRegion.LONG, SharedRegion.COMPLETED_SEQUENCE) != sequence)
        {
            throw new IOException("completion of another round");
        }
        return d.get(SharedRegion.INT, SharedRegion.STATUS);
    }

    /** The status of the completion of the last request, read without a doorbell (the agent closed the socket). */
    int completionStatus() throws IOException
    {
        final MemorySegment d = descriptor();
        if (d.get(SharedRegion.LONG, SharedRegion.COMPLETED_SEQUENCE) != sequence)
        {
            throw new IOException("completion of another round");
        }
        return d.get(SharedRegion.INT, SharedRegion.STATUS);
    }

    String lastMessage()
    {
        final MemorySegment d = descriptor();
        final byte[] bytes = new byte[d.get(SharedRegion.INT, SharedRegion.MESSAGE_LENGTH)];
        MemorySegment.copy(d, SharedRegion.MESSAGE, MemorySegment.ofArray(bytes), 0, bytes.length);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private MemorySegment descriptor()
    {
        return mapping.asSlice(SharedRegion.HEADER_LENGTH + (long)localRank * SharedRegion.DESCRIPTOR_LENGTH,
            SharedRegion.DESCRIPTOR_LENGTH);
    }

    /** Rings bye, as a rank that tears its process group down does before it leaves. */
    void bye() throws IOException
    {
        channel.write(ByteBuffer.wrap(new byte[] {AgentProtocol.DOORBELL_BYE}));
    }

    @Override
    public void close() throws IOException
    {
        channel.close();
        if (arena != null)
        {
            arena.close();
        }
    }
}
