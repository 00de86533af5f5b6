package org.inagg.transport.capture;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a whole classic pcap file (either byte order, microsecond or nanosecond timestamps) into memory: what tests
 * and tools use to look at what {@link PcapWriter} wrote. Not for large files.
 */
public final class PcapReader
{
    private static final int MAGIC_NANOS = 0xA1B2_3C4D;

    private PcapReader()
    {
    }

    /**
     * One record.
     *
     * @param timestampNanos  Unix time of the record in nanoseconds.
     * @param originalLength  the frame's length on the wire.
     * @param frame           the captured bytes (as many as the record holds).
     */
    public record Record(long timestampNanos, int originalLength, byte[] frame)
    {
    }

    /**
     * The file's records.
     *
     * @param linkType  the global header's link type (1: Ethernet).
     * @param snapshotLength the global header's snapshot length.
     * @param records   every record in file order.
     */
    public record Capture(int linkType, int snapshotLength, List<Record> records)
    {
    }

    /**
     * Reads {@code file}.
     *
     * @throws IOException when the file cannot be read or is not a pcap file (bad magic, truncated record).
     */
    public static Capture read(final Path file) throws IOException
    {
        final ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        if (in.remaining() < PcapWriter.GLOBAL_HEADER_LENGTH)
        {
            throw new IOException(file + ": " + in.remaining() + " bytes, shorter than a pcap header");
        }
        int magic = in.getInt(0);
        if (magic != PcapWriter.MAGIC && magic != MAGIC_NANOS)
        {
            in.order(ByteOrder.BIG_ENDIAN);
            magic = in.getInt(0);
            if (magic != PcapWriter.MAGIC && magic != MAGIC_NANOS)
            {
                throw new IOException(file + ": not a pcap file (magic " + Integer.toHexString(in.getInt(0)) + ")");
            }
        }
        final long fractionNanos = magic == MAGIC_NANOS ? 1 : 1000;
        final int snapshotLength = in.getInt(16);
        final int linkType = in.getInt(20);
        in.position(PcapWriter.GLOBAL_HEADER_LENGTH);
        final List<Record> records = new ArrayList<>();
        while (in.hasRemaining())
        {
            if (in.remaining() < PcapWriter.RECORD_HEADER_LENGTH)
            {
                throw new IOException(file + ": truncated record header at byte " + in.position());
            }
            final long seconds = Integer.toUnsignedLong(in.getInt());
            final long fraction = Integer.toUnsignedLong(in.getInt());
            final int captured = in.getInt();
            final int original = in.getInt();
            if (captured < 0 || captured > in.remaining())
            {
                throw new IOException(file + ": record of " + captured + " bytes runs past the end at byte "
                    + in.position());
            }
            final byte[] frame = new byte[captured];
            in.get(frame);
            records.add(new Record(seconds * 1_000_000_000L + fraction * fractionNanos, original, frame));
        }
        return new Capture(linkType, snapshotLength, List.copyOf(records));
    }
}
