package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import org.inagg.wire.InaggHeader;

/**
 * Messages between the ESA switch and the parameter server, on the unchanged 20-byte inagg header
 * ({@link InaggHeader}). Two kinds reach the server:
 * <ul>
 *   <li><b>RAW</b>: a worker's AGGREGATE, forwarded as it came (the switch could not aggregate it). The switch only
 *       writes the reason into Status ({@link #REASON_COLLISION}, {@link #REASON_RETRANSMIT}, ...).</li>
 *   <li><b>PARTIAL</b> (Type {@link #TYPE_PARTIAL}): what an aggregator held, with the bitmap of the workers whose
 *       contributions it sums. Element Count counts the lanes <i>and</i> the bitmap words, so the length check of
 *       {@link InaggHeader#check} holds unchanged; Worker Id says how many of them are bitmap words, and Session is
 *       the session of the job the block belongs to, as every other message of the job carries it.</li>
 * </ul>
 * <pre>
 *   PARTIAL (switch to parameter server)
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------+-------+---------------+-------------------------------+
 *  |   1   |   5   |  Flags (INT32)|            Job Id             |  0
 *  +-------+-------+---------------+-------------------------------+
 *  |  B = bitmap words (32-bit)    |S|  Slot Index (of the block)  |  4
 *  +-------------------------------+-------------------------------+
 *  |                  Sequence (the block's key)                   |  8
 *  +-------------------------------+---------------+---------------+
 *  |    Element Count = L + B      | Block Exponent| max Next Exp. | 12
 *  +---------------+---------------+---------------+---------------+
 *  | Holder's prio.|    Reason     | Session (of the block's job)  | 16
 *  +---------------+---------------+-------------------------------+
 *  |                 L lane sums (int32, big-endian)         ...   | 20
 *  +---------------------------------------------------------------+
 *  |     B bitmap words: bit (w mod 32) of word (w / 32) = worker w  | 20 + 4L
 *  +-------------------------------+-------------------------------+
 *  |           0                   | Owner (not in ALL_REDUCE ones)| 20 + 4(L + B)
 *  +-------------------------------+-------------------------------+
 * </pre>
 * Flags carry, besides INT32, the collective and reduce op of the block's packets in the same bits as an AGGREGATE's
 * (docs/wire-format.md, "Collectives and reduce ops"), and {@link #FLAG_RESULTS_DOWN} (0x80) where the switch asks
 * for its workers' result once: the lanes are combined with that op (SUM, MIN, MAX), and an
 * ALL_GATHER PARTIAL holds its Owner's lanes if its bitmap has the Owner, no lanes otherwise. A REDUCE_SCATTER or
 * ALL_GATHER PARTIAL ends with one more word, its Owner (Priority and Status, where an AGGREGATE has it, hold the
 * holder's priority and the reason here), also counted in Element Count: Element Count = L + B + 1. An ALL_REDUCE
 * PARTIAL (collective bits 0) has no Owner word, so an ALL_REDUCE SUM PARTIAL, the only one the P4 programs send, is
 * byte for byte what it was before the collectives.
 * B = ceil(W / 32) for the job's W workers, as the P4 programs' 32-bit bitmap words; it sits where an AGGREGATE has
 * its worker id (a PARTIAL speaks for several workers, which the server counts from the bitmap). Session is the
 * session of the block's job at the switch when it sent the PARTIAL: for an evicted block that is its holder's job,
 * not the job of the packet that evicted it. The server merges a PARTIAL of its current session, starts a newer one
 * sent by a switch of the job, and drops any other (docs/sessions.md). Reason is one of
 * {@link #REASON_PREEMPTED}, {@link #REASON_FLUSHED}, {@link #REASON_COMPLETE} (the copy of a completed sum that the
 * server keeps to answer retransmissions), {@link #REASON_STALE}, {@link #REASON_SUBTREE} (a lower switch's sum of
 * its own workers, in two-level aggregation). Type 5 is not used by the worker protocol, whose
 * {@code MessageType} ends at 4; the constant lives here because the switch and the server are its only users.
 * <p>
 * The parameter server answers workers with the RESULT the switch sends (AGGREGATE, {@link InaggHeader#FLAG_RESULT},
 * worker id rewritten, the block's slot, copy and sequence): a worker cannot tell who summed its block.
 */
public final class EsaWire
{
    /** Header Type of a partial aggregate with its worker bitmap. */
    public static final int TYPE_PARTIAL = 5;
    /**
     * Flags bit of a PARTIAL (the bit an AGGREGATE reserves, so no switch ever copies it from a worker's packet, and
     * the P4 programs, whose PARTIALs carry INT32 alone, never set it): "send the result of my workers to me, once".
     * A software first-level switch sets it on its SUBTREE PARTIALs when it relays results down the tree
     * ({@code UpstreamAggregation#resultsDown()}); the server then sends the round's RESULT (worker id 0) once to that
     * switch instead of once to each worker of the PARTIAL's bitmap, and the switch multicasts it to them. A PARTIAL
     * with the bit clear is answered as before: the server sends the result to every worker itself.
     */
    public static final int FLAG_RESULTS_DOWN = 0x80;

    /** Status of a RAW: the aggregator was held by another block that this packet could not preempt. */
    public static final int REASON_COLLISION = 1;
    /** Status of a RAW: a retransmission (ESA never lets one allocate an aggregator). */
    public static final int REASON_RETRANSMIT = 2;
    /** Status of a RAW: its block was evicted from (or diverted at) this aggregator before, see the tombstone. */
    public static final int REASON_TOMBSTONE = 3;
    /** Status of a PARTIAL: a packet of a higher-priority job took the aggregator. */
    public static final int REASON_PREEMPTED = 4;
    /** Status of a PARTIAL: a retransmission of the block found it incomplete in the switch and flushed it. */
    public static final int REASON_FLUSHED = 5;
    /** Status of a PARTIAL: the complete sum (every worker's bit set), already multicast by the switch. */
    public static final int REASON_COMPLETE = 6;
    /** Status of a PARTIAL: evicted by a newer block of the same job hashing to the same aggregator. */
    public static final int REASON_STALE = 7;
    /**
     * Status of a PARTIAL: a switch below the server summed every worker it serves (two-level aggregation, see
     * {@code org.inagg.p4.softswitch.UpstreamAggregation}); the server adds it like any partial.
     */
    public static final int REASON_SUBTREE = 8;

    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private EsaWire()
    {
    }

    /** 32-bit bitmap words for {@code workers} workers. */
    public static int bitmapWords(final int workers)
    {
        return (workers + 31) >>> 5;
    }

    /** Length of an ALL_REDUCE PARTIAL carrying {@code lanes} lanes for a job of {@code workers} workers. */
    public static int partialLength(final int lanes, final int workers)
    {
        return InaggHeader.messageLength(lanes + bitmapWords(workers));
    }

    /** Length of a PARTIAL of {@code collective} carrying {@code lanes} lanes for a job of {@code workers} workers. */
    public static int partialLength(final int lanes, final int workers, final int collective)
    {
        return InaggHeader.messageLength(lanes + bitmapWords(workers) + ownerWords(collective));
    }

    /** The longest PARTIAL of a job of {@code workers} workers with {@code lanes} lanes per packet (an Owner word). */
    public static int maxPartialLength(final int lanes, final int workers)
    {
        return InaggHeader.messageLength(lanes + bitmapWords(workers) + 1);
    }

    /** Words after the bitmap of a PARTIAL of {@code collective}: its Owner, unless ALL_REDUCE. */
    private static int ownerWords(final int collective)
    {
        return collective == InaggHeader.COLLECTIVE_ALL_REDUCE ? 0 : 1;
    }

    /** Bitmap words of a PARTIAL (its Worker Id field). */
    public static int partialBitmapWords(final MemorySegment m, final long o)
    {
        return InaggHeader.workerId(m, o);
    }

    /** Lanes of a PARTIAL: Element Count less the bitmap words and the Owner word (negative if malformed). */
    public static int partialLanes(final MemorySegment m, final long o)
    {
        return InaggHeader.elementCount(m, o) - partialBitmapWords(m, o) - ownerWords(InaggHeader.collective(m, o));
    }

    /**
     * The Owner of a REDUCE_SCATTER or ALL_GATHER PARTIAL: its last word, a worker id (so below 2^16; anything else is
     * not a worker of the job).
     */
    public static int partialOwner(final MemorySegment m, final long o)
    {
        return m.get(I32, o + InaggHeader.PAYLOAD_OFFSET + (long)(InaggHeader.elementCount(m, o) - 1) * Integer.BYTES);
    }

    /** Writes the Owner word of a REDUCE_SCATTER or ALL_GATHER PARTIAL whose header is written. */
    public static void setPartialOwner(final MemorySegment m, final long o, final int owner)
    {
        m.set(I32, o + InaggHeader.PAYLOAD_OFFSET + (long)(InaggHeader.elementCount(m, o) - 1) * Integer.BYTES,
            owner);
    }

    public static void setPartialBitmapWords(final MemorySegment m, final long o, final int words)
    {
        InaggHeader.setWorkerId(m, o, words);
    }

    /**
     * Writes a PARTIAL's header: Type {@link #TYPE_PARTIAL}, {@code flags} (INT32, the collective and the reduce op),
     * the block's job, session, slot field, sequence, exponents and priority, {@code reason} in Status, {@code lanes}
     * lanes, {@code words} bitmap words and, unless the collective is ALL_REDUCE, the Owner word counted in Element
     * Count. The lanes, the bitmap words and the Owner ({@link #setPartialOwner}) follow, written by the caller.
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public static void writePartialHeader(final MemorySegment m, final long o, final int flags, final int jobId,
        final int session, final int slotField, final int sequence, final int lanes, final int words,
        final int blockExponent, final int nextExponent, final int priority, final int reason)
    {
        InaggHeader.write(m, o, TYPE_PARTIAL, flags, jobId, words, slotField, slotField >>> 15, sequence,
            lanes + words + ownerWords((flags & InaggHeader.COLLECTIVE_MASK) >>> InaggHeader.COLLECTIVE_SHIFT),
            blockExponent, nextExponent, priority);
        InaggHeader.setStatus(m, o, reason);
        InaggHeader.setSession(m, o, session);
    }

    /** Bitmap word {@code i} of a PARTIAL. */
    public static int partialBitmapWord(final MemorySegment m, final long o, final int i)
    {
        return m.get(I32, o + InaggHeader.PAYLOAD_OFFSET + (long)(partialLanes(m, o) + i) * Integer.BYTES);
    }

    /** Writes bitmap word {@code i} of a PARTIAL carrying {@code lanes} lanes. */
    public static void setPartialBitmapWord(
        final MemorySegment m, final long o, final int lanes, final int i, final int word)
    {
        m.set(I32, o + InaggHeader.PAYLOAD_OFFSET + (long)(lanes + i) * Integer.BYTES, word);
    }

    /** Whether a PARTIAL's bitmap has worker {@code w}. */
    public static boolean partialHasWorker(final MemorySegment m, final long o, final int w)
    {
        return (partialBitmapWord(m, o, w >>> 5) & (1 << (w & 31))) != 0;
    }
}
