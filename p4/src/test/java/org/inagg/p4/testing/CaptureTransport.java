package org.inagg.p4.testing;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.inagg.p4.esa.EsaWire;
import org.inagg.testing.RecordingTransport;
import org.inagg.transport.MessageHandler;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

/**
 * A {@link RecordingTransport} of 4 KiB messages that also builds the messages switch tests deliver (AGGREGATE, JOIN,
 * ESA's PARTIAL) and reads a PARTIAL's lanes.
 */
public final class CaptureTransport extends RecordingTransport
{
    public CaptureTransport()
    {
        super(4096);
    }

    public static byte[] aggregate(final int job, final int worker, final int sequence, final int priority, final int flags,
        final int... lanes)
    {
        final byte[] bytes = new byte[InaggHeader.messageLength(lanes.length)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        InaggHeader.write(m, 0, MessageType.AGGREGATE, InaggHeader.FLAG_INT32 | flags, job, worker, sequence % 7,
            sequence & 1, sequence, lanes.length, 0, InaggHeader.NO_EXPONENT, priority);
        for (int k = 0; k < lanes.length; k++)
        {
            InaggHeader.setElement(m, 0, k, lanes[k]);
        }
        return bytes;
    }

    /** {@link #aggregate} of {@code session} of the job. */
    public static byte[] aggregateOfSession(final int job, final int session, final int worker, final int sequence,
        final int flags, final int... lanes)
    {
        final byte[] bytes = aggregate(job, worker, sequence, 0, flags, lanes);
        InaggHeader.setSession(MemorySegment.ofArray(bytes), 0, session);
        return bytes;
    }

    /** A JOIN of {@code worker} of a job of {@code workers}, asking for any session, with no credential. */
    public static byte[] join(final int job, final int worker, final int workers)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.write(MemorySegment.ofArray(bytes), 0, MessageType.JOIN, 0, job, worker, 0, 0, workers, 0, 0,
            InaggHeader.NO_EXPONENT, 0);
        return bytes;
    }

    /** Delivers every worker's JOIN (worker i from peer {@code firstPeer + i}), then forgets the answers. */
    public void joinAll(final MessageHandler handler, final int job, final int workers, final int firstPeer)
    {
        for (int w = 0; w < workers; w++)
        {
            deliver(handler, join(job, w, workers), firstPeer + w);
        }
        sent.clear();
    }

    public static byte[] partial(final int job, final int workers, final int sequence, final int reason, final int bitmap,
        final int... lanes)
    {
        return partialOfSession(job, 0, workers, sequence, reason, bitmap, lanes);
    }

    /** A PARTIAL of {@code session} of the job: slot {@code sequence % 7}, copy {@code sequence & 1}, INT32. */
    public static byte[] partialOfSession(final int job, final int session, final int workers, final int sequence,
        final int reason, final int bitmap, final int... lanes)
    {
        final int words = EsaWire.bitmapWords(workers);
        final byte[] bytes = new byte[EsaWire.partialLength(lanes.length, workers)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        EsaWire.writePartialHeader(m, 0, InaggHeader.FLAG_INT32, job, session, (sequence & 1) << 15 | sequence % 7,
            sequence, lanes.length, words, 0, InaggHeader.NO_EXPONENT, 0, reason);
        for (int k = 0; k < lanes.length; k++)
        {
            InaggHeader.setElement(m, 0, k, lanes[k]);
        }
        InaggHeader.setElement(m, 0, lanes.length, bitmap);
        return bytes;
    }

    /**
     * A PARTIAL of {@code collective} and {@code op} (session 0, slot and copy as {@link #partialOfSession}), with its
     * Owner word unless the collective is ALL_REDUCE.
     */
    public static byte[] collectivePartial(final int job, final int workers, final int sequence, final int collective,
        final int op, final int owner, final int bitmap, final int... lanes)
    {
        final byte[] bytes = new byte[EsaWire.partialLength(lanes.length, workers, collective)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        EsaWire.writePartialHeader(m, 0, InaggHeader.FLAG_INT32 | InaggHeader.collectiveFlags(collective, op), job, 0,
            (sequence & 1) << 15 | sequence % 7, sequence, lanes.length, EsaWire.bitmapWords(workers), 0,
            InaggHeader.NO_EXPONENT, 0, EsaWire.REASON_SUBTREE);
        for (int k = 0; k < lanes.length; k++)
        {
            InaggHeader.setElement(m, 0, k, lanes[k]);
        }
        EsaWire.setPartialBitmapWord(m, 0, lanes.length, 0, bitmap);
        if (collective != InaggHeader.COLLECTIVE_ALL_REDUCE)
        {
            EsaWire.setPartialOwner(m, 0, owner);
        }
        return bytes;
    }

    /** An AGGREGATE of {@code collective} and {@code op} with its Owner (as {@link #aggregate}, session 0). */
    public static byte[] collectiveAggregate(final int job, final int worker, final int sequence, final int collective,
        final int op, final int owner, final int... lanes)
    {
        final byte[] bytes = aggregate(job, worker, sequence, 0, InaggHeader.collectiveFlags(collective, op), lanes);
        InaggHeader.setOwner(MemorySegment.ofArray(bytes), 0, owner);
        return bytes;
    }

    /** The lanes of a PARTIAL: its Element Count words less the workers' bitmap words behind them. */
    public static int[] partialLanes(final Sent partial)
    {
        return Arrays.copyOf(partial.lanes(), EsaWire.partialLanes(partial.segment(), 0));
    }
}
