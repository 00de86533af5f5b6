package org.inagg.transport.capture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Fuzzes {@link PcapReader#read}, which reads the capture files of {@code --capture} and the Wireshark tests
 * (docs/fuzzing.md). Invariants: a bad file fails with an {@link IOException} that names it, never another exception;
 * an accepted file is read whole: its global header and every record header and frame account for every byte, in
 * order, each frame being the bytes that follow its record header, each timestamp non-negative.
 */
class PcapReaderFuzzTest
{
    private static final Path FILE = scratchFile();

    private static Path scratchFile()
    {
        try
        {
            // tmpfs where there is one: every input is written to the file and read back.
            final Path shm = Path.of("/dev/shm");
            final Path dir = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "inagg-pcap-fuzz")
                : Files.createTempDirectory("inagg-pcap-fuzz");
            dir.toFile().deleteOnExit();
            final Path file = dir.resolve("fuzz.pcap");
            file.toFile().deleteOnExit();
            return file;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    @FuzzTest(maxDuration = "10s")
    void shouldRefuseABadCaptureWithAnIOExceptionAndReadAGoodOneWhole(final byte[] bytes) throws IOException
    {
        Files.write(FILE, bytes);
        final PcapReader.Capture capture;
        try
        {
            capture = PcapReader.read(FILE);
        }
        catch (final IOException e)
        {
            assertThat(e.getMessage()).contains(FILE.toString());
            return;
        }
        int offset = PcapWriter.GLOBAL_HEADER_LENGTH;
        for (final PcapReader.Record record : capture.records())
        {
            assertThat(record.timestampNanos()).isNotNegative();
            offset += PcapWriter.RECORD_HEADER_LENGTH;
            assertThat(record.frame()).isEqualTo(Arrays.copyOfRange(bytes, offset, offset + record.frame().length));
            offset += record.frame().length;
        }
        assertThat(offset).isEqualTo(bytes.length);
    }

    /**
     * Writes the seeds into {@code <root>/datapath/src/test/resources/.../<this class>Inputs/<method>/}: a capture of
     * {@link PcapWriter} with two frames, the same in big-endian with nanosecond timestamps, an empty capture, a
     * truncated record and a record longer than the file.
     */
    public static void main(final String[] args) throws IOException
    {
        final Path seeds = Path.of(args.length > 0 ? args[0] : ".").resolve("datapath/src/test/resources/org/inagg/"
            + "transport/capture/PcapReaderFuzzTestInputs/shouldRefuseABadCaptureWithAnIOExceptionAndReadAGoodOneWhole");
        Files.createDirectories(seeds);
        final byte[] first = new byte[60];
        final byte[] second = new byte[42];
        Arrays.fill(first, (byte)0x11);
        Arrays.fill(second, (byte)0x22);
        final byte[] little = capture(ByteOrder.LITTLE_ENDIAN, PcapWriter.MAGIC, first, second);
        Files.write(seeds.resolve("two-frames-le-micros"), little);
        Files.write(seeds.resolve("two-frames-be-nanos"), capture(ByteOrder.BIG_ENDIAN, 0xA1B2_3C4D, first, second));
        Files.write(seeds.resolve("empty"), capture(ByteOrder.LITTLE_ENDIAN, PcapWriter.MAGIC));
        Files.write(seeds.resolve("truncated-record"), Arrays.copyOf(little, little.length - 10));
        final byte[] tooLong = little.clone();
        ByteBuffer.wrap(tooLong).order(ByteOrder.LITTLE_ENDIAN).putInt(PcapWriter.GLOBAL_HEADER_LENGTH + 8, 1 << 20);
        Files.write(seeds.resolve("record-past-the-end"), tooLong);
    }

    private static byte[] capture(final ByteOrder order, final int magic, final byte[]... frames)
    {
        int length = PcapWriter.GLOBAL_HEADER_LENGTH;
        for (final byte[] frame : frames)
        {
            length += PcapWriter.RECORD_HEADER_LENGTH + frame.length;
        }
        final ByteBuffer out = ByteBuffer.allocate(length).order(order);
        out.putInt(magic).putShort((short)PcapWriter.VERSION_MAJOR).putShort((short)PcapWriter.VERSION_MINOR)
            .putInt(0).putInt(0).putInt(PcapWriter.SNAPSHOT_LENGTH).putInt(PcapWriter.LINKTYPE_ETHERNET);
        int second = 1_700_000_000;
        for (final byte[] frame : frames)
        {
            out.putInt(second++).putInt(123_456).putInt(frame.length).putInt(frame.length).put(frame);
        }
        return out.array();
    }
}
