package org.inagg.services.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.TreeMap;

import org.inagg.transport.Transport;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.transport.capture.PcapTransport;
import org.inagg.transport.capture.PcapWriter;
import picocli.CommandLine.Option;

/**
 * {@code --pcap FILE} and {@code --pcap-max-bytes SIZE}, shared by {@code local}, {@code switch}, {@code ps} and
 * {@code worker}: a packet capture of what the node sends and receives (docs/observability.md).
 */
public final class CaptureOptions
{
    @Option(names = "--pcap", paramLabel = "FILE",
        description = "Capture what this node sends and receives into FILE (pcap, Ethernet/IPv4/UDP frames; open "
            + "it with Wireshark or tshark and tools/wireshark/inagg.lua). `local` captures at its switch; a switch "
            + "with --shards N writes one file a shard, FILE with .shardI before its extension.")
    Path file;

    @Option(names = "--pcap-max-bytes", paramLabel = "SIZE", defaultValue = "100M",
        description = "Stop capturing, saying so once, when FILE would grow past SIZE bytes (each shard's file, with "
            + "--shards); K, M, G suffixes are KiB, MiB, GiB (default ${DEFAULT-VALUE}).")
    String maxBytes;

    private PcapWriter writer;
    /** With shards: shard number to its writer, in shard order for the report. */
    private final TreeMap<Integer, PcapWriter> shardWriters = new TreeMap<>();

    /** --pcap: the capture file, or null for none. */
    public Path file()
    {
        return file;
    }

    /** The writer of --pcap, opened on the first call; null without --pcap. */
    public PcapWriter writer()
    {
        if (file == null || writer != null)
        {
            return writer;
        }
        writer = open(file);
        return writer;
    }

    private PcapWriter open(final Path path)
    {
        final long cap = parseSize(maxBytes);
        try
        {
            return PcapWriter.open(path, cap, System.err::println);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("--pcap: cannot create " + path + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * The capture file of one shard of a sharded switch: {@code FILE} with {@code .shardN} before its extension
     * ({@code s.pcap} to {@code s.shard1.pcap}), since each shard's thread writes its own (a writer is not shared
     * between threads); merge them with {@code mergecap}.
     */
    static Path shardFile(final Path file, final int shard)
    {
        final String name = file.getFileName().toString();
        final int dot = name.lastIndexOf('.');
        final String sharded = dot > 0 ? name.substring(0, dot) + ".shard" + shard + name.substring(dot)
            : name + ".shard" + shard;
        return file.resolveSibling(sharded);
    }

    /** {@code transport} with the capture of --pcap around it, or as it is without --pcap. */
    Transport wrap(final Transport transport, final FrameHeaders headers)
    {
        return PcapTransport.wrap(transport, writer(), headers);
    }

    /**
     * As {@link #wrap(Transport, FrameHeaders)} for shard {@code shard} of {@code shards}: with more than one shard,
     * each captures into its own {@link #shardFile}.
     */
    Transport wrap(final int shard, final int shards, final Transport transport, final FrameHeaders headers)
    {
        if (shards == 1 || file == null)
        {
            return wrap(transport, headers);
        }
        final PcapWriter shardWriter = open(shardFile(file, shard));
        shardWriters.put(shard, shardWriter);
        return PcapTransport.wrap(transport, shardWriter, headers);
    }

    /** One line on what was captured (one a shard's file), when --pcap was given. */
    public void report(final PrintWriter out)
    {
        if (writer != null)
        {
            report(out, writer, file);
        }
        shardWriters.values().forEach(shardWriter -> report(out, shardWriter, shardWriter.file()));
    }

    private static void report(final PrintWriter out, final PcapWriter writer, final Path file)
    {
        writer.flush();
        out.printf("pcap: %,d frames (%,d bytes) in %s%s%n", writer.framesCaptured(), writer.fileBytes(), file,
            writer.stopped() ? ", then stopped; " + String.format("%,d", writer.framesNotCaptured())
                + " frames not captured" : "");
        out.flush();
    }

    static long parseSize(final String text)
    {
        final String t = text.trim().toUpperCase(Locale.ROOT);
        final int shift = t.endsWith("K") ? 10 : t.endsWith("M") ? 20 : t.endsWith("G") ? 30 : 0;
        try
        {
            final long value = Long.parseLong(shift == 0 ? t : t.substring(0, t.length() - 1)) << shift;
            if (value < PcapWriter.GLOBAL_HEADER_LENGTH)
            {
                throw new IllegalArgumentException("--pcap-max-bytes must be at least "
                    + PcapWriter.GLOBAL_HEADER_LENGTH + " (the file header), got " + text);
            }
            return value;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--pcap-max-bytes wants a size such as 104857600, 512K, 100M or 2G, "
                + "got '" + text + "'");
        }
    }
}
