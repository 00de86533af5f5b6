package org.inagg.p4.testing;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.inagg.wire.InaggHeader;
import org.inagg.wire.WireCheck;

/**
 * The input format of the p4 module's fuzz tests (docs/fuzzing.md): a fixed-size head of parameters the harness
 * reads (which slot copy and sequence its exact round uses, lane counts, ...), then junk records, each a message
 * with a control byte saying where it goes and when.
 * <pre>
 *   head (HEAD_LENGTH bytes) | record* ; record = control (1) | length (2, big-endian) | message (length bytes)
 *   control: bit 7 = run the harness's next legitimate step first; bits 0..6 = which peer the message comes from
 *            (and, for harnesses with several receivers, which receiver), taken modulo the harness's table.
 * </pre>
 * A record whose length runs past the input takes what is left. Seeds are written with {@link #frame}, so they hold
 * real messages built with {@link InaggHeader} and the fuzzer starts from deep inputs.
 */
public final class JunkInput
{
    /** Bytes of the head; an input shorter than this is padded with zeros. */
    public static final int HEAD_LENGTH = 8;
    /** Bit of the control byte: run the next legitimate step before this record. */
    public static final int ADVANCE = 0x80;
    /** Longest junk message: the capture transport's limit (a real transport never hands up more). */
    public static final int MAX_MESSAGE = 4096;
    private static final int MAX_RECORDS = 64;
    /** Held so that the level set on it sticks (loggers are weakly referenced). */
    private static final Logger QUIET = quietLogging();

    /** One junk message: where it comes from and whether a legitimate step runs before it. */
    public record Junk(int control, byte[] bytes)
    {
        public boolean advance()
        {
            return (control & ADVANCE) != 0;
        }

        /** The control byte's selector (bits 0..6) as an index into a table of {@code n} choices. */
        public int select(final int n)
        {
            return (control & 0x7F) % n;
        }

        public MemorySegment segment()
        {
            // Exactly the message: a read past it throws rather than reading a neighbour's bytes.
            return MemorySegment.ofArray(bytes);
        }

        /** Whether the message passes the header check every receiver runs first. */
        public boolean wellFormed()
        {
            return InaggHeader.check(segment(), 0, bytes.length) == WireCheck.OK;
        }
    }

    private final byte[] head;
    private final List<Junk> records;

    private JunkInput(final byte[] head, final List<Junk> records)
    {
        this.head = head;
        this.records = records;
    }

    public static JunkInput parse(final byte[] data)
    {
        final byte[] head = Arrays.copyOf(data, HEAD_LENGTH);
        final List<Junk> records = new ArrayList<>();
        int p = HEAD_LENGTH;
        while (p + 3 <= data.length && records.size() < MAX_RECORDS)
        {
            final int control = data[p] & 0xFF;
            final int length = Math.min(MAX_MESSAGE, ((data[p + 1] & 0xFF) << 8) | (data[p + 2] & 0xFF));
            p += 3;
            final int end = Math.min(data.length, p + length);
            records.add(new Junk(control, Arrays.copyOfRange(data, p, end)));
            p = end;
        }
        return new JunkInput(head, List.copyOf(records));
    }

    /** Unsigned byte {@code i} of the head. */
    public int head(final int i)
    {
        return head[i] & 0xFF;
    }

    /** Big-endian int of head bytes {@code i..i+3}. */
    public int headInt(final int i)
    {
        return (head(i) << 24) | (head(i + 1) << 16) | (head(i + 2) << 8) | head(i + 3);
    }

    public List<Junk> records()
    {
        return records;
    }

    /** The bytes of an input with this head and these records (for seeds and regression tests). */
    public static byte[] frame(final byte[] head, final List<Junk> records)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(Arrays.copyOf(head, HEAD_LENGTH));
        for (final Junk junk : records)
        {
            out.write(junk.control());
            out.write(junk.bytes().length >>> 8);
            out.write(junk.bytes().length);
            out.writeBytes(junk.bytes());
        }
        return out.toByteArray();
    }

    /**
     * Silences the nodes' lifecycle lines (a job installed per run, a warning per spoofed JOIN): millions of runs
     * would print millions of lines.
     */
    public static Logger quietLogging()
    {
        final Logger logger = Logger.getLogger("org.inagg");
        logger.setLevel(Level.OFF);
        return logger;
    }

    /** Touch to make sure {@link #QUIET} is set before a harness builds its nodes. */
    public static void init()
    {
        if (QUIET.getLevel() != Level.OFF)
        {
            throw new IllegalStateException("logging not silenced");
        }
    }
}
