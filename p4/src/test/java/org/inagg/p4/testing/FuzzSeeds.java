package org.inagg.p4.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.testing.JunkInput.Junk;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;

/**
 * Writes the committed seed corpora of the datapath and p4 fuzz tests (docs/fuzzing.md): real messages built with
 * {@link InaggHeader} and {@link EsaWire}, framed as each harness reads them ({@link JunkInput}), so that fuzzing
 * starts from deep inputs rather than from bytes that fail the header check. Run from the repository root:
 * <pre>
 *   java -cp p4/target/test-classes:p4/target/classes:datapath/target/classes:$(cat p4/target/fuzz.classpath) \
 *       org.inagg.p4.testing.FuzzSeeds .
 * </pre>
 * (scripts/fuzz.sh writes {@code fuzz.classpath}). Existing seeds of the same name are overwritten; other files in the
 * seed directories (findings kept as regression inputs) are left alone.
 */
public final class FuzzSeeds
{
    private FuzzSeeds()
    {
    }

    public static void main(final String[] args)
    {
        final Path root = Path.of(args.length > 0 ? args[0] : ".");
        header(root.resolve("datapath/src/test/resources/org/inagg/wire/InaggHeaderFuzzTestInputs/"
            + "shouldCheckAnyBytesAndDecodeWhatItAcceptsWithinBounds"));
        final Path p4 = root.resolve("p4/src/test/resources/org/inagg/p4");
        softwareSwitch(p4.resolve("softswitch/SoftwareSwitchFuzzTestInputs/"
            + "shouldCountJunkAndStillAggregateTheRoundExactly"));
        esa(p4.resolve("esa/EsaSwitchFuzzTestInputs/shouldCountJunkAndKeepTheBlockExact"), false);
        esa(p4.resolve("esa/ParameterServerFuzzTestInputs/shouldCountJunkAndKeepTheBlockExact"), true);
        esaWire(p4.resolve("esa/EsaWireFuzzTestInputs/shouldDecodeWhatTheServerAcceptsWithinBoundsAndEncodeItBack"));
        worker(p4.resolve("softswitch/WorkerAgentFuzzTestInputs/shouldIgnoreJunkAndAllReduceExactly"));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Messages

    /** An AGGREGATE with {@code lanes} lanes valued {@code 1, 2, ...} times {@code scale}. */
    public static byte[] aggregate(final int job, final int worker, final int slot, final int copy, final int sequence,
        final int flags, final int lanes, final int scale)
    {
        final byte[] bytes = new byte[InaggHeader.messageLength(lanes)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        InaggHeader.write(m, 0, MessageType.AGGREGATE, flags, job, worker, slot, copy, sequence, lanes, 0, 3, 0);
        for (int k = 0; k < lanes; k++)
        {
            InaggHeader.setElement(m, 0, k, (k + 1) * scale);
        }
        return bytes;
    }

    public static byte[] join(final int job, final int worker, final int workers)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.write(MemorySegment.ofArray(bytes), 0, MessageType.JOIN, 0, job, worker, 0, 0, workers, 0, 0,
            InaggHeader.NO_EXPONENT, 0);
        return bytes;
    }

    public static byte[] joinAck(final int job, final int worker, final int slots, final int workers, final int lanes)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoinAck(MemorySegment.ofArray(bytes), 0, job, worker, slots, workers, lanes);
        return bytes;
    }

    public static byte[] reject(final int job, final int worker, final int reason)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.writeReject(MemorySegment.ofArray(bytes), 0, job, worker, reason);
        return bytes;
    }

    /** A PARTIAL of a job of {@code workers} workers: lanes {@code 1..lanes} and the bitmap word {@code bitmap}. */
    public static byte[] partial(final int job, final int workers, final int slot, final int copy, final int sequence,
        final int reason, final int bitmap, final int lanes)
    {
        final int words = EsaWire.bitmapWords(workers);
        final byte[] bytes = new byte[EsaWire.partialLength(lanes, workers)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        EsaWire.writePartialHeader(m, 0, InaggHeader.FLAG_INT32, job, 0, copy << 15 | slot, sequence, lanes, words, 0,
            2, 0, reason);
        for (int k = 0; k < lanes; k++)
        {
            InaggHeader.setElement(m, 0, k, k + 1);
        }
        EsaWire.setPartialBitmapWord(m, 0, lanes, 0, bitmap);
        return bytes;
    }

    private static byte[] withFlags(final byte[] message, final int flags)
    {
        final byte[] copy = message.clone();
        InaggHeader.setFlags(MemorySegment.ofArray(copy), 0, flags);
        return copy;
    }

    private static byte[] truncated(final byte[] message, final int by)
    {
        return Arrays.copyOf(message, Math.max(0, message.length - by));
    }

    private static byte[] badVersion(final byte[] message)
    {
        final byte[] copy = message.clone();
        copy[0] = (byte)(0x20 | (copy[0] & 0xF));
        return copy;
    }

    private static Junk junk(final int control, final byte[] bytes)
    {
        return new Junk(control, bytes);
    }

    private static byte[] head(final int... bytes)
    {
        final byte[] head = new byte[JunkInput.HEAD_LENGTH];
        for (int i = 0; i < bytes.length; i++)
        {
            head[i] = (byte)bytes[i];
        }
        return head;
    }

    private static void write(final Path dir, final String name, final byte[] bytes)
    {
        try
        {
            Files.createDirectories(dir);
            Files.write(dir.resolve(name), bytes);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Seeds per harness

    private static void header(final Path dir)
    {
        write(dir, "aggregate-1-lane", aggregate(1, 0, 0, 0, 5, 0, 1, 7));
        write(dir, "aggregate-256-lanes", aggregate(7, 3, 5, 1, 0x01020304, InaggHeader.FLAG_RETRANSMIT, 256, 3));
        write(dir, "result-int32", aggregate(7, 3, 5, 1, -1, InaggHeader.FLAG_RESULT | InaggHeader.FLAG_INT32, 4, -9));
        write(dir, "exponent-only", aggregate(1, 0, 2, 0, 2, 0, 0, 1));
        write(dir, "join", join(3, 1, 4));
        write(dir, "join-ack", joinAck(3, 1, 128, 4, 256));
        write(dir, "reject", reject(3, 9, RejectReason.WORKER_ID_OUT_OF_RANGE));
        write(dir, "partial", partial(2, 40, 1, 1, 77, EsaWire.REASON_PREEMPTED, 0b1011, 4));
        write(dir, "truncated", truncated(aggregate(1, 0, 0, 0, 5, 0, 3, 7), 2));
        write(dir, "short", new byte[] {0x11, 0, 0, 1});
        write(dir, "bad-version", badVersion(join(3, 1, 4)));
    }

    private static void softwareSwitch(final Path dir)
    {
        // Junk peers: 0..2 job A's workers, 3..5 job B's, 6 the server, 7 a stranger, 8 unnamed (-1).
        final int adv = JunkInput.ADVANCE;
        write(dir, "round-only", JunkInput.frame(head(0, 0, 0, 0, 0, 40, 0x1B, 2), List.of()));
        write(dir, "interleaved", JunkInput.frame(head(3, 1, 0, 0, 1, 0, 0x3F, 0xFE), List.of(
            junk(0, join(1, 0, 3)),
            junk(7, join(1, 0, 3)),
            junk(adv | 1, join(1, 1, 4)),
            junk(adv | 2, join(1, 2, 3)),
            junk(adv | 0, aggregate(1, 0, 2, 0, 9, 0, 8, 1)),
            junk(adv | 1, aggregate(1, 1, 0, 1, 256, 0, 9, 1)),
            junk(1, aggregate(1, 1, 5, 0, 256, 0, 2, 1)),
            junk(adv | 2, aggregate(1, 2, 1, 1, 256, InaggHeader.FLAG_RESULT, 3, 1)),
            junk(3, aggregate(2, 0, 1, 0, 10, 0, 4, 2)),
            junk(adv | 4, aggregate(2, 1, 0, 0, 256, InaggHeader.FLAG_RETRANSMIT, 4, 2)),
            junk(5, aggregate(2, 2, 0, 0, 256, 0, 4, 2)),
            junk(adv | 6, partial(2, 3, 0, 0, 256, EsaWire.REASON_SUBTREE, 0b11, 4)))));
        write(dir, "malformed", JunkInput.frame(head(5, 3, 0x7F, 0xFF, 0xFF, 0xFF, 0x07, 0x80), List.of(
            junk(0, truncated(aggregate(1, 0, 2, 1, -1, 0, 4, 5), 1)),
            junk(adv | 1, badVersion(aggregate(1, 1, 2, 1, -1, 0, 4, 5))),
            junk(2, new byte[] {0x11}),
            junk(adv | 7, aggregate(9, 0, 0, 0, 1, 0, 1, 1)),
            junk(8, join(1, 0, 3)),
            junk(adv | 0, aggregate(1, 0, 2, 1, 0x7FFFFFFE, 0, 4, 5)),
            junk(adv | 1, aggregate(1, 1, 2, 1, 0x80000001, 0, 4, 5)),
            junk(3, join(2, 0, 3)),
            junk(adv | 4, join(2, 2, 3)),
            junk(6, reject(1, 0, RejectReason.UNKNOWN_JOB)))));
        // One-byte records: retransmissions of the round under test (b % 5: A's workers 0..2, B's 3..4).
        write(dir, "retransmissions", JunkInput.frame(head(2, 1, 0, 0, 0, 9, 0x12, 0), List.of(
            junk(adv, new byte[] {0}), junk(adv, new byte[] {1}), junk(adv, new byte[] {0}), junk(adv, new byte[] {2}),
            junk(adv, new byte[] {1}), junk(adv, new byte[] {3}), junk(adv, new byte[] {4}), junk(0, new byte[] {3}),
            junk(0, new byte[] {2}))));
    }

    private static void esa(final Path dir, final boolean toServer)
    {
        // Junk peers: 0 the switch (in the server), 1 the server (in the switch), 2..4 job 1's workers, 5, 6 job 2's,
        // 7 a stranger, 8 unnamed (-1). Head: variant, slot copy, sequence, lanes, priority.
        final int adv = JunkInput.ADVANCE;
        for (int variant = 0; variant < 3; variant++)
        {
            write(dir, "round-only-" + variant, JunkInput.frame(head(variant, 2, 0, 0, 0, 64, 3, 1), List.of()));
        }
        final List<Junk> contention = new ArrayList<>();
        for (int s = 0; s < 6; s++)
        {
            // Job 2 (priority 9) and other blocks of job 1 competing for the four aggregators.
            contention.add(junk(s % 2 == 0 ? 5 : 6,
                aggregate(2, s & 1, s % 4, s / 4 & 1, 64 + s, InaggHeader.FLAG_INT32, 4, 1)));
            contention.add(junk(adv | 2 + s % 3, aggregate(1, s % 3, (s + 1) % 4, 0, 60 + s, InaggHeader.FLAG_INT32,
                2, 3)));
        }
        write(dir, "contention", JunkInput.frame(head(0, 2, 0, 0, 0, 64, 3, 1), contention));
        write(dir, "contention-atp", JunkInput.frame(head(2, 2, 0, 0, 0, 64, 3, 1), contention));
        // One-byte records: b % 4 = 0..2 that worker retransmits, 3 a carried message is duplicated.
        write(dir, "retransmissions-and-duplicates", JunkInput.frame(head(0, 2, 0, 0, 0, 64, 3, 1), List.of(
            junk(adv, new byte[] {0}), junk(5, aggregate(2, 0, 0, 0, 64, InaggHeader.FLAG_INT32, 4, 1)),
            junk(adv, new byte[] {1}), junk(0, new byte[] {3}), junk(0, new byte[] {7}), junk(0, new byte[] {11}),
            junk(adv, new byte[] {0}), junk(0, new byte[] {15}), junk(0, new byte[] {2}))));
        write(dir, "retransmissions-atp", JunkInput.frame(head(2, 2, 0, 0, 0, 64, 3, 1), List.of(
            junk(adv, new byte[] {3}), junk(adv, new byte[] {0}), junk(adv, new byte[] {1}), junk(0, new byte[] {7}),
            junk(0, new byte[] {11}), junk(0, new byte[] {2}))));
        final int peer = toServer ? 0 : 1;
        write(dir, "server-traffic", JunkInput.frame(head(1, 5, 0, 0, 1, 0, 5, 200), List.of(
            junk(peer, partial(1, 3, 1, 1, 300, EsaWire.REASON_PREEMPTED, 0b011, 6)),
            junk(adv | peer, partial(1, 3, 3, 0, 301, EsaWire.REASON_COMPLETE, 0b111, 6)),
            junk(peer, partial(2, 2, 0, 0, 302, EsaWire.REASON_STALE, 0b01, 4)),
            junk(adv | 2, aggregate(1, 0, 1, 0, 299, InaggHeader.FLAG_INT32 | InaggHeader.FLAG_RESULT, 6, 1)),
            junk(1, aggregate(1, 0, 1, 0, 303, InaggHeader.FLAG_INT32 | InaggHeader.FLAG_RESULT, 6, 1)),
            junk(3, aggregate(1, 1, 2, 0, 304, InaggHeader.FLAG_INT32 | InaggHeader.FLAG_RETRANSMIT, 6, 1)),
            junk(5, join(2, 0, 2)),
            junk(adv | 7, join(1, 0, 3)),
            junk(8, truncated(partial(1, 3, 1, 1, 300, EsaWire.REASON_PREEMPTED, 0b011, 6), 3)))));
    }

    private static void esaWire(final Path dir)
    {
        // First byte: the job's workers - 1.
        write(dir, "partial-3-workers", concat(2, partial(1, 3, 1, 0, 9, EsaWire.REASON_PREEMPTED, 0b101, 4)));
        write(dir, "partial-40-workers", concat(39, partial(1, 40, 1, 0, 9, EsaWire.REASON_SUBTREE, 0b1111, 8)));
        write(dir, "partial-no-lanes", concat(0, partial(1, 1, 0, 0, 0, EsaWire.REASON_COMPLETE, 1, 0)));
        // PARTIALs of the collectives (Flags bits 3-6, an Owner word after the bitmap).
        write(dir, "partial-reduce-scatter-max", concat(3, CaptureTransport.collectivePartial(1, 4, 9,
            InaggHeader.COLLECTIVE_REDUCE_SCATTER, InaggHeader.OP_MAX, 2, 0b0011, 1, -2, 3, 4)));
        write(dir, "partial-all-gather-without-owner", concat(3, CaptureTransport.collectivePartial(1, 4, 10,
            InaggHeader.COLLECTIVE_ALL_GATHER, InaggHeader.OP_SUM, 3, 0b0101)));
    }

    private static void worker(final Path dir)
    {
        // Head: float (odd) or int32, elements, slots, scale, seed. Control: selector % 8 = target worker (% 2) and
        // peer (/ 2: the switch, a stranger, the other worker, unnamed); bits 3..6 cycles to run first.
        final int adv = JunkInput.ADVANCE;
        write(dir, "floats-only", JunkInput.frame(head(1, 29, 2, 12, 0, 0, 0, 5), List.of()));
        write(dir, "ints-only", JunkInput.frame(head(0, 40, 3, 0, 1, 2, 3, 4), List.of()));
        write(dir, "stray-results", JunkInput.frame(head(1, 40, 3, 12, 0, 0, 0, 5), List.of(
            junk(adv | 3 << 3 | 2, aggregate(1, 0, 0, 0, 0, InaggHeader.FLAG_RESULT, 0, 1)),
            junk(adv | 1 << 3 | 3, aggregate(1, 1, 1, 0, 1, InaggHeader.FLAG_RESULT, 0, 1)),
            junk(adv | 2 << 3, aggregate(1, 0, 0, 1, 3, InaggHeader.FLAG_RESULT, 8, 1000)),
            junk(1, aggregate(1, 1, 2, 0, 2, InaggHeader.FLAG_RESULT, 1, 1)),
            junk(adv | 4, aggregate(1, 0, 1, 1, 4, InaggHeader.FLAG_RESULT, 8, 3)),
            junk(6, join(1, 0, 2)),
            junk(adv | 7, truncated(aggregate(1, 1, 0, 1, 3, InaggHeader.FLAG_RESULT, 8, 3), 4)))));
        write(dir, "int-results", JunkInput.frame(head(0, 17, 2, 0, 0, 0, 0, 9), List.of(
            junk(adv | 2 << 3 | 2, aggregate(1, 0, 0, 0, 0, InaggHeader.FLAG_RESULT | InaggHeader.FLAG_INT32, 8, 5)),
            junk(adv | 3, aggregate(1, 1, 1, 0, 1, InaggHeader.FLAG_RESULT | InaggHeader.FLAG_INT32, 8, 5)),
            junk(adv | 0, aggregate(1, 0, 0, 1, 2, InaggHeader.FLAG_RESULT | InaggHeader.FLAG_INT32, 1, 5)))));
        write(dir, "join-answers", JunkInput.frame(head(0, 24, 3, 0, 0, 0, 0, 1), List.of(
            junk(2, joinAck(1, 0, 1, 2, 4)),
            junk(3, reject(1, 1, RejectReason.WORKER_COUNT_MISMATCH)),
            junk(0, joinAck(1, 0, 3, 2, 8)),
            junk(5, joinAck(1, 1, 3, 2, 8)))));
    }

    private static byte[] concat(final int first, final byte[] rest)
    {
        final byte[] bytes = new byte[rest.length + 1];
        bytes[0] = (byte)first;
        System.arraycopy(rest, 0, bytes, 1, rest.length);
        return bytes;
    }
}
