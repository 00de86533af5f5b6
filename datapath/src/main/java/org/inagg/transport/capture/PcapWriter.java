package org.inagg.transport.capture;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Writes a classic libpcap file (the format of {@code tcpdump -w}; Wireshark and tshark read it) of Ethernet frames,
 * through one preallocated buffer and a {@link FileChannel}: nothing is allocated per frame.
 * <p>
 * The file is a 24-byte global header followed by one record per frame. Every field is little-endian (the magic number
 * tells readers the byte order) and timestamps have microsecond resolution:
 * <pre>
 *   global header (once)
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                 Magic Number = 0xA1B2C3D4                     |  0
 *  +-------------------------------+-------------------------------+
 *  |      Major Version = 2        |      Minor Version = 4        |  4
 *  +-------------------------------+-------------------------------+
 *  |                 Time Zone Offset = 0 (unused)                 |  8
 *  +---------------------------------------------------------------+
 *  |                 Timestamp Accuracy = 0 (unused)               | 12
 *  +---------------------------------------------------------------+
 *  |                 Snapshot Length = 262144                      | 16
 *  +---------------------------------------------------------------+
 *  |                 Link Type = 1 (LINKTYPE_ETHERNET)             | 20
 *  +---------------------------------------------------------------+
 *
 *   record (per frame)
 *  +---------------------------------------------------------------+
 *  |                 Timestamp, seconds (Unix time)                |  0
 *  +---------------------------------------------------------------+
 *  |                 Timestamp, microseconds                       |  4
 *  +---------------------------------------------------------------+
 *  |                 Captured Length = frame bytes that follow     |  8
 *  +---------------------------------------------------------------+
 *  |                 Original Length = the frame's length          | 12
 *  +---------------------------------------------------------------+
 *  |  Ethernet frame: destination MAC, source MAC, EtherType,      | 16
 *  |  IPv4, UDP, the inagg message (no FCS)                  ...   |
 *  +---------------------------------------------------------------+
 * </pre>
 * Frames are never cut: the captured length equals the original length. Writing is claim, fill, commit like a
 * transport's: {@link #claim(int)} reserves room for a frame of a given length in {@link #buffer()} (writing the
 * record header) and {@link #commit()} takes it. Records collect in the buffer, which goes to the file when full, on
 * {@link #flush()} and on {@link #close()}.
 * <p>
 * <b>Size cap.</b> The file never grows past {@code maxBytes}: the first frame that would cross it stops the capture,
 * which says so once through the notice consumer; later frames are counted in {@link #framesNotCaptured()}. A write
 * error (a full disk) stops the capture the same way. A capture that stops never disturbs the traffic it watches.
 * <p>
 * Not thread safe: one writer belongs to the one agent thread that sends and receives through its transport.
 */
public final class PcapWriter implements AutoCloseable
{
    /** Magic number of microsecond-resolution pcap. */
    public static final int MAGIC = 0xA1B2_C3D4;
    public static final int VERSION_MAJOR = 2;
    public static final int VERSION_MINOR = 4;
    /** LINKTYPE_ETHERNET: IEEE 802.3 frames without preamble or FCS. */
    public static final int LINKTYPE_ETHERNET = 1;
    /** The snapshot length the file states: more than any IPv4 frame, so nothing is cut. */
    public static final int SNAPSHOT_LENGTH = 262_144;
    public static final int GLOBAL_HEADER_LENGTH = 24;
    public static final int RECORD_HEADER_LENGTH = 16;
    /** Largest frame a record holds: an Ethernet header, the largest IPv4 datagram and room for options. */
    public static final int MAX_FRAME_LENGTH = 14 + 65_535;
    /** Default of {@code --pcap-max-bytes}: 100 MiB. */
    public static final long DEFAULT_MAX_BYTES = 100L << 20;

    private static final int BUFFER_BYTES = 1 << 20;
    private static final ValueLayout.OfInt LE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort LE16 =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path file;
    private final FileChannel channel;
    private final long maxBytes;
    private final Consumer<String> notices;
    private final ByteBuffer byteBuffer;
    private final MemorySegment buffer;
    private final long wallMicrosAtStart;
    private final long nanosAtStart;
    private int position;
    private long claimedAt = -1;
    private int claimedLength;
    private long fileBytes;
    private long framesCaptured;
    private long framesNotCaptured;
    private boolean stopped;
    private boolean stoppedByError;
    private boolean closed;

    private PcapWriter(final Path file, final FileChannel channel, final long maxBytes,
        final Consumer<String> notices)
    {
        this.file = file;
        this.channel = channel;
        this.maxBytes = maxBytes;
        this.notices = notices;
        this.byteBuffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
        this.buffer = MemorySegment.ofBuffer(byteBuffer);
        this.wallMicrosAtStart = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
        this.nanosAtStart = System.nanoTime();
    }

    /**
     * Creates (or truncates) {@code file} and writes the global header.
     *
     * @param maxBytes largest size of the file in bytes, headers included; at least the global header.
     * @param notices  where the one notice goes that the capture stopped (the cap, or a write error).
     * @throws IOException when the file cannot be created.
     */
    public static PcapWriter open(final Path file, final long maxBytes, final Consumer<String> notices)
        throws IOException
    {
        if (maxBytes < GLOBAL_HEADER_LENGTH)
        {
            throw new IllegalArgumentException("a pcap file needs at least " + GLOBAL_HEADER_LENGTH
                + " bytes for its header; the cap is " + maxBytes);
        }
        final FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING);
        final PcapWriter writer = new PcapWriter(file, channel, maxBytes, notices);
        writer.writeGlobalHeader();
        return writer;
    }

    /** Like {@link #open(Path, long, Consumer)}, with notices printed on standard error. */
    public static PcapWriter open(final Path file, final long maxBytes) throws IOException
    {
        return open(file, maxBytes, System.err::println);
    }

    private void writeGlobalHeader()
    {
        buffer.set(LE32, 0, MAGIC);
        buffer.set(LE16, 4, (short)VERSION_MAJOR);
        buffer.set(LE16, 6, (short)VERSION_MINOR);
        buffer.set(LE32, 8, 0);
        buffer.set(LE32, 12, 0);
        buffer.set(LE32, 16, SNAPSHOT_LENGTH);
        buffer.set(LE32, 20, LINKTYPE_ETHERNET);
        position = GLOBAL_HEADER_LENGTH;
        fileBytes = GLOBAL_HEADER_LENGTH;
        flush();
    }

    public Path file()
    {
        return file;
    }

    /** The memory that offsets returned by {@link #claim(int)} refer to. */
    public MemorySegment buffer()
    {
        return buffer;
    }

    /**
     * Reserves a record for a frame of {@code frameLength} bytes, stamped with the current time.
     *
     * @return the offset in {@link #buffer()} where the caller writes the frame's bytes, or -1 when the capture has
     *     stopped (cap reached, write error, closed): the frame is counted as not captured.
     */
    public long claim(final int frameLength)
    {
        if (frameLength < 0 || frameLength > MAX_FRAME_LENGTH)
        {
            throw new IllegalArgumentException("a frame of " + frameLength + " bytes does not fit a record");
        }
        final int recordLength = RECORD_HEADER_LENGTH + frameLength;
        if (stopped || closed)
        {
            framesNotCaptured++;
            return -1;
        }
        if (fileBytes + recordLength > maxBytes)
        {
            stop("reached its size cap of " + maxBytes + " bytes (--pcap-max-bytes)");
            framesNotCaptured++;
            return -1;
        }
        if (position + recordLength > BUFFER_BYTES && !drain())
        {
            framesNotCaptured++;
            return -1;
        }
        final long micros = wallMicrosAtStart + (System.nanoTime() - nanosAtStart) / 1000;
        final long at = position;
        buffer.set(LE32, at, (int)(micros / 1_000_000));
        buffer.set(LE32, at + 4, (int)(micros % 1_000_000));
        buffer.set(LE32, at + 8, frameLength);
        buffer.set(LE32, at + 12, frameLength);
        claimedAt = at;
        claimedLength = frameLength;
        return at + RECORD_HEADER_LENGTH;
    }

    /** Takes the claimed record. */
    public void commit()
    {
        if (claimedAt < 0)
        {
            throw new IllegalStateException("no record claimed");
        }
        final int recordLength = RECORD_HEADER_LENGTH + claimedLength;
        position += recordLength;
        fileBytes += recordLength;
        framesCaptured++;
        claimedAt = -1;
    }

    /** Writes {@code length} bytes of {@code memory} from {@code offset} as one frame: claim, copy, commit. */
    public boolean write(final MemorySegment memory, final long offset, final int length)
    {
        final long at = claim(length);
        if (at < 0)
        {
            return false;
        }
        MemorySegment.copy(memory, offset, buffer, at, length);
        commit();
        return true;
    }

    /** Writes the buffered records to the file. */
    public void flush()
    {
        if (!closed && !stoppedByError)
        {
            drain();
        }
    }

    private boolean drain()
    {
        try
        {
            byteBuffer.limit(position).position(0);
            while (byteBuffer.hasRemaining())
            {
                channel.write(byteBuffer);
            }
            byteBuffer.clear();
            position = 0;
            return true;
        }
        catch (final IOException ex)
        {
            stoppedByError = true;
            position = 0;
            stop("could not be written: " + ex.getMessage());
            return false;
        }
    }

    private void stop(final String why)
    {
        if (!stopped)
        {
            stopped = true;
            notices.accept("pcap " + file + " " + why + "; capture stopped after " + framesCaptured
                + " frames (" + fileBytes + " bytes), the traffic goes on");
        }
    }

    /** Whether the capture stopped (size cap or write error); frames are then counted, not written. */
    public boolean stopped()
    {
        return stopped;
    }

    public long framesCaptured()
    {
        return framesCaptured;
    }

    /** Frames offered after the capture stopped. */
    public long framesNotCaptured()
    {
        return framesNotCaptured;
    }

    /** Bytes of the file: global header and committed records, written or still buffered. */
    public long fileBytes()
    {
        return fileBytes;
    }

    /** Flushes and closes the file; idempotent. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        flush();
        closed = true;
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            notices.accept("pcap " + file + " could not be closed: " + ex.getMessage());
        }
    }
}
