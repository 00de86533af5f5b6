package org.inagg.services.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;

/**
 * One job's shared-memory file on one host, mapped by the agent and by every local rank (Python: {@code mmap} viewed
 * as tensors with {@code torch.frombuffer}). All integers little-endian (x86-64 and aarch64 are).
 * <pre>
 *  offset 0            +------------------------------------------------------------+
 *                      | header (HEADER_LENGTH = 4096)                              |
 *                      |   0 magic "INAGGSHM" (long)     8 version (int)            |
 *                      |  12 local ranks (int)          16 world size (int)         |
 *                      |  20 network chunk bytes (int)                              |
 *                      |  24 slot capacity bytes (long) 32 data offset (long)       |
 *                      |  40 result offset (long)       48 agent pid (long)         |
 *                      |  56 job key length (int)       60 chunk elements (int)     |
 *                      |  64 job key UTF-8 ...                                      |
 *  4096                +------------------------------------------------------------+
 *                      | descriptor of local rank 0 (DESCRIPTOR_LENGTH = 512)       |
 *                      |   written by the rank:                                     |
 *                      |     0 request sequence (long)  8 op (int) 12 dtype (int)   |
 *                      |    16 element count (long)    24 collective's total (long) |
 *                      |    32 gather from (long)      40 gather length (long)      |
 *                      |    48 part elements (long)    56 part rank (int)           |
 *                      |   written by the agent:                                    |
 *                      |    64 completed sequence (long) 72 status (int)            |
 *                      |    76 message length (int)                                 |
 *                      |   written by the rank:                                     |
 *                      |    80 ready elements (long)                                |
 *                      |   written by the agent:                                    |
 *                      |    88 done elements (long)    96 message UTF-8 ... 511     |
 *                      | descriptor of local rank 1 ...                             |
 *  data offset         +------------------------------------------------------------+
 *  (4096-aligned)      | data of local rank 0 (slot capacity bytes): its input      |
 *                      | data of local rank 1 ...                                   |
 *  result offset       +------------------------------------------------------------+
 *                      | result (slot capacity bytes): the all-reduced round        |
 *                      +------------------------------------------------------------+
 * </pre>
 * A round: each rank copies its tensor (or the next piece of it) into its data region, writes its descriptor and rings
 * {@link AgentProtocol#DOORBELL_REQUEST}; when every local rank has, the agent sums the data regions into the result,
 * writes each descriptor's completion and rings {@link AgentProtocol#DOORBELL_COMPLETE}; each rank copies the result
 * out. A rank writes its next request only after it copied the result out, so the agent never overwrites a result
 * someone still reads. The socket's system calls order the memory accesses on both sides.
 * <p>
 * A sum's round is a pipeline of chunks when the header's chunk elements are not 0 ({@link RoundPipeline}): the rank
 * rings its request after copying only the first chunk in (ready elements: how much of the round its data region
 * holds), and after each next chunk writes the larger ready count and rings
 * {@link AgentProtocol#DOORBELL_PROGRESS}; the agent sums what every local rank holds as it arrives (and, with network
 * chunks, sends it through the switch chunk by chunk). Once the whole in-host sum is known to be finite, the agent may
 * write how much of the result is final (done elements) and ring {@link AgentProtocol#DOORBELL_DONE} as chunks come
 * back from the switch, and the rank copies each out while the next is on the network. Other rounds (and every round with chunk elements
 * 0) are copied in whole: ready elements is the count when the request rings. The agent reads a rank's ready elements
 * whenever it handles one of its doorbells, possibly while the rank writes the next chunk's: each side writes its count
 * as one aligned 8-byte store (Python: an int64 memoryview, never {@code struct.pack_into}, which zeroes the field
 * first).
 * <p>
 * The slot capacity and the network chunk bytes (the agent's {@code --slot-bytes} and {@code --network-chunk-bytes})
 * must be the same on every host of a job spanning hosts: the slot is the most one round carries, so it decides how
 * the ranks cut a tensor into rounds, and the network chunks how the agent cuts a round into the switch's operations;
 * hosts that cut differently send packets that do not match at the switch, which waits for the missing ones until the
 * peer timeout. The ranks compare both across hosts when they make their process group (protocol version 4, which
 * gave the network chunk bytes the header's padding at 20; inagg_torch's {@code _agreement.py}).
 * <p>
 * A {@link AgentProtocol#OP_GATHER} round moves bytes instead of summing: each rank writes only the bytes it gives
 * (gather from, gather length: a byte range of the round, at the same offsets in its data region, or none), the agent
 * copies every rank's range into the result, and each rank copies out what it needs. All-gather and broadcast are
 * such rounds; the ranks' ranges do not overlap.
 * <p>
 * A round of a reduce-scatter or an all-gather over several hosts may say how it splits into the ranks' parts (part
 * elements, part rank: the round is {@code count / partElements} parts of that many elements, the first of them rank
 * {@code partRank}'s; 0 elements: no parts). With parts, the switch stage sends each host only its ranks' parts of a
 * reduce-scatter and only the host's own parts of an all-gather (the switch's REDUCE_SCATTER and ALL_GATHER); the
 * ranks are then laid out by host, {@code localWorldSize} consecutive ranks per host.
 */
public final class SharedRegion implements AutoCloseable
{
    public static final long MAGIC = 0x4D48534747414E49L; // "INAGGSHM" little-endian
    public static final int HEADER_LENGTH = 4096;
    public static final int DESCRIPTOR_LENGTH = 512;
    public static final int KEY_OFFSET = 64;
    public static final int MAX_KEY_BYTES = HEADER_LENGTH - KEY_OFFSET;

    public static final int REQUEST_SEQUENCE = 0;
    public static final int REQUEST_OP = 8;
    public static final int REQUEST_DTYPE = 12;
    public static final int REQUEST_COUNT = 16;
    public static final int REQUEST_TOTAL = 24;
    public static final int REQUEST_GATHER_FROM = 32;
    public static final int REQUEST_GATHER_LENGTH = 40;
    public static final int REQUEST_PART_ELEMENTS = 48;
    public static final int REQUEST_PART_RANK = 56;
    public static final int COMPLETED_SEQUENCE = 64;
    public static final int STATUS = 72;
    public static final int MESSAGE_LENGTH = 76;
    public static final int READY_ELEMENTS = 80;
    public static final int DONE_ELEMENTS = 88;
    public static final int MESSAGE = 96;
    public static final int MAX_MESSAGE_BYTES = DESCRIPTOR_LENGTH - MESSAGE;

    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final Arena arena;
    private final MemorySegment mapping;
    private final int localRanks;
    private final long slotCapacity;
    private final long dataOffset;

    private SharedRegion(final Path path, final Arena arena, final MemorySegment mapping, final int localRanks,
        final long slotCapacity)
    {
        this.path = path;
        this.arena = arena;
        this.mapping = mapping;
        this.localRanks = localRanks;
        this.slotCapacity = slotCapacity;
        this.dataOffset = dataOffset(localRanks);
    }

    /** Offset of the first data region for {@code localRanks} ranks. */
    public static long dataOffset(final int localRanks)
    {
        return align(HEADER_LENGTH + (long)localRanks * DESCRIPTOR_LENGTH, 4096);
    }

    /** Size of the file for {@code localRanks} ranks of {@code slotCapacity} bytes each, plus the result region. */
    public static long fileSize(final int localRanks, final long slotCapacity)
    {
        return dataOffset(localRanks) + (localRanks + 1L) * slotCapacity;
    }

    private static long align(final long value, final long alignment)
    {
        return (value + alignment - 1) / alignment * alignment;
    }

    /**
     * Creates the file (which must not exist), maps it and writes the header. The pages are not touched: each rank
     * reserves its own with {@code posix_fallocate}, so a full {@code /dev/shm} is an error there, not a SIGBUS here.
     *
     * @throws AgentProtocolException {@link AgentProtocol#ERROR_SHM_FULL} when the file system has too little room.
     */
    public static SharedRegion create(final Path path, final int localRanks, final int worldSize,
        final long slotCapacity, final String jobKey)
    {
        return create(path, localRanks, worldSize, slotCapacity, jobKey, 0, 0);
    }

    /**
     * As {@link #create(Path, int, int, long, String)}, telling the ranks to copy sums in chunks of
     * {@code chunkElements} (0: whole rounds) and that a sum goes through the switch in chunks of
     * {@code networkChunkBytes} (0: the round whole), which they compare across hosts.
     */
    public static SharedRegion create(final Path path, final int localRanks, final int worldSize,
        final long slotCapacity, final String jobKey, final int chunkElements, final int networkChunkBytes)
    {
        final long size = fileSize(localRanks, slotCapacity);
        try
        {
            final long usable = Files.getFileStore(path.getParent()).getUsableSpace();
            if (usable < size)
            {
                throw new AgentProtocolException(AgentProtocol.ERROR_SHM_FULL, "shared memory full: " + path.getParent()
                    + " has " + usable + " bytes free, the job needs " + size + " (" + localRanks + " local ranks + 1 "
                    + "result x " + slotCapacity + " bytes); lower the agent's --slot-bytes or free/enlarge "
                    + path.getParent());
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot stat " + path.getParent(), ex);
        }
        final Arena arena = Arena.ofShared();
        // Owner only (0600), never through a link; CREATE_NEW fails on any name already there.
        try (FileChannel channel = FileChannel.open(path, Set.of(StandardOpenOption.CREATE_NEW,
            StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
            PrivateDirectory.fileAttribute()))
        {
            final MemorySegment mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            final SharedRegion region = new SharedRegion(path, arena, mapping, localRanks, slotCapacity);
            final byte[] key = jobKey.getBytes(StandardCharsets.UTF_8);
            mapping.set(INT, 8, AgentProtocol.VERSION);
            mapping.set(INT, 12, localRanks);
            mapping.set(INT, 16, worldSize);
            mapping.set(INT, 20, networkChunkBytes);
            mapping.set(LONG, 24, slotCapacity);
            mapping.set(LONG, 32, region.dataOffset);
            mapping.set(LONG, 40, region.resultOffset());
            mapping.set(LONG, 48, ProcessHandle.current().pid());
            final int keyLength = Math.min(key.length, MAX_KEY_BYTES);
            mapping.set(INT, 56, keyLength);
            mapping.set(INT, 60, chunkElements);
            MemorySegment.copy(MemorySegment.ofArray(key), 0, mapping, KEY_OFFSET, keyLength);
            mapping.set(LONG, 0, MAGIC); // last: a reader that sees the magic sees the rest
            return region;
        }
        catch (final IOException ex)
        {
            arena.close();
            throw new UncheckedIOException("cannot create shared memory " + path + ": " + ex.getMessage(), ex);
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
    }

    public Path path()
    {
        return path;
    }

    public int localRanks()
    {
        return localRanks;
    }

    public long slotCapacity()
    {
        return slotCapacity;
    }

    public long resultOffset()
    {
        return dataOffset + localRanks * slotCapacity;
    }

    /** The descriptor of {@code localRank}. */
    public MemorySegment descriptor(final int localRank)
    {
        return mapping.asSlice(HEADER_LENGTH + (long)localRank * DESCRIPTOR_LENGTH, DESCRIPTOR_LENGTH);
    }

    /** The data region of {@code localRank} (its input). */
    public MemorySegment data(final int localRank)
    {
        return mapping.asSlice(dataOffset + localRank * slotCapacity, slotCapacity);
    }

    /** The result region. */
    public MemorySegment result()
    {
        return mapping.asSlice(resultOffset(), slotCapacity);
    }

    /** The whole mapping (tests). */
    MemorySegment mapping()
    {
        return mapping;
    }

    /** Writes a completion of {@code sequence} into {@code localRank}'s descriptor. */
    public void complete(final int localRank, final long sequence, final int status, final String message)
    {
        final MemorySegment d = descriptor(localRank);
        int length = 0;
        if (message != null)
        {
            final byte[] bytes = Utf8.truncate(message, MAX_MESSAGE_BYTES);
            length = bytes.length;
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, d, MESSAGE, length);
        }
        d.set(INT, MESSAGE_LENGTH, length);
        d.set(INT, STATUS, status);
        d.set(LONG, COMPLETED_SEQUENCE, sequence);
    }

    /** Elements of the round that {@code localRank} has copied into its data region (its descriptor's ready count). */
    public long ready(final int localRank)
    {
        return descriptor(localRank).get(LONG, READY_ELEMENTS);
    }

    /** Publishes that the first {@code elements} of the result are final for {@code localRank}. */
    public void done(final int localRank, final long elements)
    {
        descriptor(localRank).set(LONG, DONE_ELEMENTS, elements);
    }

    /** Unmaps and deletes the file. */
    @Override
    public void close()
    {
        arena.close();
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ignored)
        {
            // Already gone, or /dev/shm unmounted: nothing left to free.
        }
    }
}
