package org.inagg.wire;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Flyweight codec of the inagg header, read and written in place in off-heap (or heap) memory with no allocation.
 * <p>
 * An inagg message is the UDP payload of an Ethernet / IPv4 / UDP frame: this 20-byte header followed by
 * {@code elementCount} big-endian int32 lanes. Every field is in network byte order so that a P4 parser can extract it.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------+-------+---------------+-------------------------------+
 *  |Version| Type  |     Flags     |            Job Id             |  0
 *  +-------+-------+---------------+-------------------------------+
 *  |           Worker Id           |S|         Slot Index          |  4
 *  +-------------------------------+-------------------------------+
 *  |                           Sequence                            |  8
 *  +-------------------------------+---------------+---------------+
 *  |         Element Count         | Block Exponent| Next Exponent | 12
 *  +---------------+---------------+---------------+---------------+
 *  |   Priority    |    Status     |       Session (Reserved)      | 16
 *  +---------------+---------------+-------------------------------+
 *  |                     Element 0 (int32)                   ...   | 20
 *  +---------------------------------------------------------------+
 * </pre>
 * <ul>
 *   <li><b>Version</b> (4 bits): {@link #VERSION}; anything else is malformed.</li>
 *   <li><b>Type</b> (4 bits): one of {@link MessageType}.</li>
 *   <li><b>Flags</b>: {@link #FLAG_RESULT} (switch to worker), {@link #FLAG_RETRANSMIT}, {@link #FLAG_INT32}
 *       (raw int32 lanes, no fixed-point exponents).</li>
 *   <li><b>Job Id</b>, <b>Worker Id</b>: unsigned 16 bits.</li>
 *   <li><b>S</b>: the shadow-copy bit; <b>Slot Index</b>: unsigned 15 bits, the aggregator slot in the job's pool.</li>
 *   <li><b>Sequence</b>: position of the message in the job's packet stream (serial-number arithmetic, wraps).</li>
 *   <li><b>Element Count</b>: number of int32 lanes that follow (0 for exponent-only and control messages).</li>
 *   <li><b>Block Exponent</b>: signed; the agreed exponent the lanes were scaled with.</li>
 *   <li><b>Next Exponent</b>: signed; the sender's exponent for the block that will next use this slot (max-reduced by
 *       the switch); {@link #NO_EXPONENT} when there is none.</li>
 *   <li><b>Priority</b>: scheduling priority for shared switch memory (0 = lowest).</li>
 *   <li><b>Status</b>: reason code of a {@link MessageType#REJECT}, 0 otherwise.</li>
 * </ul>
 * In {@link MessageType#JOIN} messages Sequence holds the worker count the worker was configured with, Session the
 * session the worker asks for (0: whichever is current), and the 32 bits of Block Exponent, Next Exponent, Priority
 * and Status ({@link #JOIN_INCARNATION_OFFSET}) the worker's <i>incarnation</i> (a random number drawn once per
 * process: a JOIN with another incarnation for a worker id already in the session is a restarted worker). A JOIN
 * carries no lanes, or exactly {@link #JOIN_CREDENTIAL_LANES}: the worker's <i>JOIN credential</i>, the 64-bit secret
 * the controller installed for that worker id with the job (lane 0 the high half); a switch whose row for the worker
 * holds a credential drops a JOIN that does not show exactly it (docs/security.md). In {@link MessageType#JOIN_ACK}
 * messages the switch answers with the job's parameters: Sequence = number of workers, Slot Index = slots in the
 * job's pool (the window), Reserved = lanes per packet, and the job's session in the 16 bits of Priority and Status
 * ({@link #ACK_SESSION_OFFSET}). In {@link MessageType#AGGREGATE} messages (both directions) and
 * {@link MessageType#REJECT}s, Session is the job's session the message belongs to: a switch aggregates only packets
 * of the job's current session (docs/sessions.md). A REJECT with {@link RejectReason#STALE_SESSION} names the current
 * session and, in Sequence, the worker whose rejoin started it ({@link #SESSION_CAUSE_CONTROL_PLANE} when the control
 * plane did). PARTIALs of the ESA protocol use the same 16 bits for their bitmap's word count ({@code EsaWire}).
 */
public final class InaggHeader
{
    public static final int VERSION = 1;
    public static final int LENGTH = 20;

    public static final int VERSION_TYPE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int JOB_ID_OFFSET = 2;
    public static final int WORKER_ID_OFFSET = 4;
    public static final int SLOT_OFFSET = 6;
    public static final int SEQUENCE_OFFSET = 8;
    public static final int ELEMENT_COUNT_OFFSET = 12;
    public static final int BLOCK_EXPONENT_OFFSET = 14;
    public static final int NEXT_EXPONENT_OFFSET = 15;
    public static final int PRIORITY_OFFSET = 16;
    public static final int STATUS_OFFSET = 17;
    public static final int RESERVED_OFFSET = 18;
    /** The session of an AGGREGATE, JOIN or REJECT: the Reserved field. */
    public static final int SESSION_OFFSET = RESERVED_OFFSET;
    /** The session of a JOIN_ACK: Priority and Status as one 16-bit field (Reserved holds the lanes per packet). */
    public static final int ACK_SESSION_OFFSET = PRIORITY_OFFSET;
    /** Sequence of a STALE_SESSION REJECT when the session was started by the control plane, not a worker's rejoin. */
    public static final int SESSION_CAUSE_CONTROL_PLANE = -1;
    /** Session of a JOIN that takes whichever session is current. */
    public static final int ANY_SESSION = 0;
    /** The incarnation of a JOIN: Block Exponent, Next Exponent, Priority and Status as one 32-bit field. */
    public static final int JOIN_INCARNATION_OFFSET = BLOCK_EXPONENT_OFFSET;
    /**
     * Lanes of a JOIN that carries a credential: lane 0 is its high 32 bits, lane 1 its low 32 bits. A JOIN of any
     * other lane count carries none ({@link #NO_CREDENTIAL}).
     */
    public static final int JOIN_CREDENTIAL_LANES = 2;
    /** The credential of a JOIN that shows none; a job row with it requires none (installed without a controller). */
    public static final long NO_CREDENTIAL = 0;
    public static final int PAYLOAD_OFFSET = LENGTH;

    public static final int FLAG_RESULT = 0x01;
    public static final int FLAG_RETRANSMIT = 0x02;
    public static final int FLAG_INT32 = 0x04;
    /** Flags bits 3-4: the collective of an AGGREGATE (docs/wire-format.md, "Collectives and reduce ops"). */
    public static final int COLLECTIVE_SHIFT = 3;
    public static final int COLLECTIVE_MASK = 0x3 << COLLECTIVE_SHIFT;
    /** Flags bits 5-6: the reduce op of an AGGREGATE. */
    public static final int OP_SHIFT = 5;
    public static final int OP_MASK = 0x3 << OP_SHIFT;
    /** Flags bit 7: reserved, must be 0 in an AGGREGATE. */
    public static final int FLAG_RESERVED = 0x80;

    public static final int COLLECTIVE_ALL_REDUCE = 0;
    public static final int COLLECTIVE_REDUCE_SCATTER = 1;
    /** ALL_GATHER; a broadcast is an ALL_GATHER whose Owner is the root in every packet. */
    public static final int COLLECTIVE_ALL_GATHER = 2;

    public static final int OP_SUM = 0;
    public static final int OP_MIN = 1;
    public static final int OP_MAX = 2;

    /** The Owner of a REDUCE_SCATTER or ALL_GATHER AGGREGATE: Priority and Status as one 16-bit field. */
    public static final int OWNER_OFFSET = PRIORITY_OFFSET;

    public static final int SHADOW_BIT = 0x8000;
    public static final int MAX_SLOTS = 0x8000;
    public static final int MAX_JOB_ID = 0xFFFF;
    public static final int MAX_WORKER_ID = 0xFFFF;
    public static final int MAX_ELEMENT_COUNT = 0xFFFF;
    public static final byte NO_EXPONENT = Byte.MIN_VALUE;

    /** Bytes of Ethernet (14), IPv4 (20) and UDP (8) headers in front of the inagg header on the wire. */
    public static final int L2_L4_HEADERS_LENGTH = 14 + 20 + 8;
    /** Bytes a packet adds to its lanes within an MTU: IPv4 (20), UDP (8) and the inagg header. */
    public static final int HEADERS_IN_MTU = 20 + 8 + LENGTH;
    /** Lanes per packet that fill a 1500-byte MTU: (1500 - 20 - 8 - 20) / 4. */
    public static final int MAX_ELEMENTS_FOR_1500_MTU = (1500 - HEADERS_IN_MTU) / Integer.BYTES;

    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private InaggHeader()
    {
    }

    /** Length in bytes of a message carrying {@code elementCount} lanes. */
    public static int messageLength(final int elementCount)
    {
        return LENGTH + elementCount * Integer.BYTES;
    }

    public static int version(final MemorySegment m, final long o)
    {
        return (m.get(ValueLayout.JAVA_BYTE, o + VERSION_TYPE_OFFSET) >>> 4) & 0xF;
    }

    public static int type(final MemorySegment m, final long o)
    {
        return m.get(ValueLayout.JAVA_BYTE, o + VERSION_TYPE_OFFSET) & 0xF;
    }

    public static int flags(final MemorySegment m, final long o)
    {
        return m.get(ValueLayout.JAVA_BYTE, o + FLAGS_OFFSET) & 0xFF;
    }

    public static int jobId(final MemorySegment m, final long o)
    {
        return m.get(U16, o + JOB_ID_OFFSET) & 0xFFFF;
    }

    public static int workerId(final MemorySegment m, final long o)
    {
        return m.get(U16, o + WORKER_ID_OFFSET) & 0xFFFF;
    }

    /** The slot field as on the wire: shadow bit and index. */
    public static int slotField(final MemorySegment m, final long o)
    {
        return m.get(U16, o + SLOT_OFFSET) & 0xFFFF;
    }

    public static int slotIndex(final MemorySegment m, final long o)
    {
        return slotField(m, o) & (SHADOW_BIT - 1);
    }

    public static int shadowCopy(final MemorySegment m, final long o)
    {
        return slotField(m, o) >>> 15;
    }

    public static int sequence(final MemorySegment m, final long o)
    {
        return m.get(I32, o + SEQUENCE_OFFSET);
    }

    public static int elementCount(final MemorySegment m, final long o)
    {
        return m.get(U16, o + ELEMENT_COUNT_OFFSET) & 0xFFFF;
    }

    public static int blockExponent(final MemorySegment m, final long o)
    {
        return m.get(ValueLayout.JAVA_BYTE, o + BLOCK_EXPONENT_OFFSET);
    }

    public static int nextExponent(final MemorySegment m, final long o)
    {
        return m.get(ValueLayout.JAVA_BYTE, o + NEXT_EXPONENT_OFFSET);
    }

    /** The collective of an AGGREGATE: {@link #COLLECTIVE_ALL_REDUCE}, ..._REDUCE_SCATTER, ..._ALL_GATHER or 3. */
    public static int collective(final MemorySegment m, final long o)
    {
        return (flags(m, o) & COLLECTIVE_MASK) >>> COLLECTIVE_SHIFT;
    }

    /** The reduce op of an AGGREGATE: {@link #OP_SUM}, {@link #OP_MIN}, {@link #OP_MAX} or 3. */
    public static int reduceOp(final MemorySegment m, final long o)
    {
        return (flags(m, o) & OP_MASK) >>> OP_SHIFT;
    }

    /**
     * Whether an AGGREGATE names a reserved collective or op: a switch drops it and counts it {@code DROP_UNSUPPORTED}
     * ({@link #FLAG_RESERVED} set is malformed instead, as the P4 programs count it).
     */
    public static boolean hasReservedCollectiveBits(final MemorySegment m, final long o)
    {
        final int flags = flags(m, o);
        return (flags & COLLECTIVE_MASK) == COLLECTIVE_MASK || (flags & OP_MASK) == OP_MASK;
    }

    /** Flags bits of a collective and an op, to OR into the other flags. */
    public static int collectiveFlags(final int collective, final int op)
    {
        return (collective << COLLECTIVE_SHIFT) & COLLECTIVE_MASK | (op << OP_SHIFT) & OP_MASK;
    }

    /** The Owner of a REDUCE_SCATTER or ALL_GATHER AGGREGATE (unsigned 16 bits). */
    public static int owner(final MemorySegment m, final long o)
    {
        return m.get(U16, o + OWNER_OFFSET) & 0xFFFF;
    }

    public static void setOwner(final MemorySegment m, final long o, final int owner)
    {
        m.set(U16, o + OWNER_OFFSET, (short)owner);
    }

    public static int priority(final MemorySegment m, final long o)
    {
        return m.get(ValueLayout.JAVA_BYTE, o + PRIORITY_OFFSET) & 0xFF;
    }

    public static int status(final MemorySegment m, final long o)
    {
        return m.get(ValueLayout.JAVA_BYTE, o + STATUS_OFFSET) & 0xFF;
    }

    /** Session of an AGGREGATE, JOIN or REJECT (unsigned 16 bits). */
    public static int session(final MemorySegment m, final long o)
    {
        return m.get(U16, o + SESSION_OFFSET) & 0xFFFF;
    }

    public static void setSession(final MemorySegment m, final long o, final int session)
    {
        m.set(U16, o + SESSION_OFFSET, (short)session);
    }

    /** Session granted by a {@link MessageType#JOIN_ACK} (Priority and Status as one unsigned 16-bit field). */
    public static int joinAckSession(final MemorySegment m, final long o)
    {
        return m.get(U16, o + ACK_SESSION_OFFSET) & 0xFFFF;
    }

    /** Incarnation of a JOIN (unsigned 32 bits, as a long); 0 means the worker states none. */
    public static long joinIncarnation(final MemorySegment m, final long o)
    {
        return m.get(I32, o + JOIN_INCARNATION_OFFSET) & 0xFFFF_FFFFL;
    }

    /**
     * Writes a JOIN of {@link #LENGTH} bytes: the worker count in Sequence, the session asked for
     * ({@link #ANY_SESSION} for the current one) and the worker's incarnation (its low 32 bits); no credential.
     */
    public static void writeJoin(final MemorySegment m, final long o, final int jobId, final int worker,
        final int workers, final int session, final long incarnation)
    {
        writeJoin(m, o, jobId, worker, workers, session, incarnation, NO_CREDENTIAL);
    }

    /**
     * As {@link #writeJoin(MemorySegment, long, int, int, int, int, long)}, showing {@code credential}: a JOIN of
     * {@link #joinLength(long)} bytes, the credential in two lanes ({@link #JOIN_CREDENTIAL_LANES}) unless it is
     * {@link #NO_CREDENTIAL}.
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public static void writeJoin(final MemorySegment m, final long o, final int jobId, final int worker,
        final int workers, final int session, final long incarnation, final long credential)
    {
        final int lanes = credential == NO_CREDENTIAL ? 0 : JOIN_CREDENTIAL_LANES;
        write(m, o, MessageType.JOIN, 0, jobId, worker, 0, 0, workers, lanes, 0, NO_EXPONENT, 0);
        setSession(m, o, session);
        m.set(I32, o + JOIN_INCARNATION_OFFSET, (int)incarnation);
        if (lanes != 0)
        {
            m.set(I32, o + PAYLOAD_OFFSET, (int)(credential >>> 32));
            m.set(I32, o + PAYLOAD_OFFSET + Integer.BYTES, (int)credential);
        }
    }

    /** Length of a JOIN showing {@code credential}: 20 bytes without one, 28 with one. */
    public static int joinLength(final long credential)
    {
        return credential == NO_CREDENTIAL ? LENGTH : messageLength(JOIN_CREDENTIAL_LANES);
    }

    /**
     * The credential a JOIN shows: its two lanes as one 64-bit number (lane 0 high), or {@link #NO_CREDENTIAL} when
     * it carries another number of lanes. Call on a message {@link #check} accepted.
     */
    public static long joinCredential(final MemorySegment m, final long o)
    {
        if (elementCount(m, o) != JOIN_CREDENTIAL_LANES)
        {
            return NO_CREDENTIAL;
        }
        final long high = m.get(I32, o + PAYLOAD_OFFSET);
        return high << 32 | m.get(I32, o + PAYLOAD_OFFSET + Integer.BYTES) & 0xFFFF_FFFFL;
    }

    /** Lanes per packet stated by a {@link MessageType#JOIN_ACK} (its Reserved field). */
    public static int joinLanes(final MemorySegment m, final long o)
    {
        return m.get(U16, o + RESERVED_OFFSET) & 0xFFFF;
    }

    public static void setJoinLanes(final MemorySegment m, final long o, final int lanes)
    {
        m.set(U16, o + RESERVED_OFFSET, (short)lanes);
    }

    /**
     * Writes a JOIN_ACK as every switch and server sends it: FLAG_RESULT, the job and worker id, Sequence =
     * {@code workers}, Slot Index = {@code slots}, Reserved = {@code lanes}.
     */
    public static void writeJoinAck(final MemorySegment m, final long o, final int jobId, final int worker,
        final int slots, final int workers, final int lanes)
    {
        writeJoinAck(m, o, jobId, worker, slots, workers, lanes, 0);
    }

    /** As {@link #writeJoinAck(MemorySegment, long, int, int, int, int, int)}, granting {@code session}. */
    public static void writeJoinAck(final MemorySegment m, final long o, final int jobId, final int worker,
        final int slots, final int workers, final int lanes, final int session)
    {
        write(m, o, MessageType.JOIN_ACK, FLAG_RESULT, jobId, worker, slots, 0, workers, 0, 0, NO_EXPONENT, 0);
        setJoinLanes(m, o, lanes);
        m.set(U16, o + ACK_SESSION_OFFSET, (short)session);
    }

    /** Writes a REJECT of a JOIN: FLAG_RESULT, the job and worker id, the {@link RejectReason} in Status. */
    public static void writeReject(final MemorySegment m, final long o, final int jobId, final int worker,
        final int reason)
    {
        writeReject(m, o, jobId, worker, reason, 0, 0);
    }

    /**
     * Writes a REJECT naming the job's current {@code session}; for {@link RejectReason#STALE_SESSION}, Sequence is
     * the worker whose rejoin started that session ({@link #SESSION_CAUSE_CONTROL_PLANE} if none).
     */
    public static void writeReject(final MemorySegment m, final long o, final int jobId, final int worker,
        final int reason, final int session, final int cause)
    {
        write(m, o, MessageType.REJECT, FLAG_RESULT, jobId, worker, 0, 0, cause, 0, 0, NO_EXPONENT, 0);
        setStatus(m, o, reason);
        setSession(m, o, session);
    }

    /** Lane {@code i} of the payload. */
    public static int element(final MemorySegment m, final long o, final int i)
    {
        return m.get(I32, o + PAYLOAD_OFFSET + (long)i * Integer.BYTES);
    }

    /** Writes every header field; the reserved field is zeroed. */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public static void write(
        final MemorySegment m,
        final long o,
        final int type,
        final int flags,
        final int jobId,
        final int workerId,
        final int slotIndex,
        final int shadowCopy,
        final int sequence,
        final int elementCount,
        final int blockExponent,
        final int nextExponent,
        final int priority)
    {
        m.set(ValueLayout.JAVA_BYTE, o + VERSION_TYPE_OFFSET, (byte)((VERSION << 4) | (type & 0xF)));
        m.set(ValueLayout.JAVA_BYTE, o + FLAGS_OFFSET, (byte)flags);
        m.set(U16, o + JOB_ID_OFFSET, (short)jobId);
        m.set(U16, o + WORKER_ID_OFFSET, (short)workerId);
        m.set(U16, o + SLOT_OFFSET, (short)((shadowCopy << 15) | (slotIndex & (SHADOW_BIT - 1))));
        m.set(I32, o + SEQUENCE_OFFSET, sequence);
        m.set(U16, o + ELEMENT_COUNT_OFFSET, (short)elementCount);
        m.set(ValueLayout.JAVA_BYTE, o + BLOCK_EXPONENT_OFFSET, (byte)blockExponent);
        m.set(ValueLayout.JAVA_BYTE, o + NEXT_EXPONENT_OFFSET, (byte)nextExponent);
        m.set(ValueLayout.JAVA_BYTE, o + PRIORITY_OFFSET, (byte)priority);
        m.set(ValueLayout.JAVA_BYTE, o + STATUS_OFFSET, (byte)0);
        m.set(U16, o + RESERVED_OFFSET, (short)0);
    }

    public static void setFlags(final MemorySegment m, final long o, final int flags)
    {
        m.set(ValueLayout.JAVA_BYTE, o + FLAGS_OFFSET, (byte)flags);
    }

    public static void setWorkerId(final MemorySegment m, final long o, final int workerId)
    {
        m.set(U16, o + WORKER_ID_OFFSET, (short)workerId);
    }

    public static void setNextExponent(final MemorySegment m, final long o, final int nextExponent)
    {
        m.set(ValueLayout.JAVA_BYTE, o + NEXT_EXPONENT_OFFSET, (byte)nextExponent);
    }

    public static void setStatus(final MemorySegment m, final long o, final int status)
    {
        m.set(ValueLayout.JAVA_BYTE, o + STATUS_OFFSET, (byte)status);
    }

    public static void setSequence(final MemorySegment m, final long o, final int sequence)
    {
        m.set(I32, o + SEQUENCE_OFFSET, sequence);
    }

    public static void setElementCount(final MemorySegment m, final long o, final int elementCount)
    {
        m.set(U16, o + ELEMENT_COUNT_OFFSET, (short)elementCount);
    }

    public static void setSlotField(final MemorySegment m, final long o, final int slotIndex, final int shadowCopy)
    {
        m.set(U16, o + SLOT_OFFSET, (short)((shadowCopy << 15) | (slotIndex & (SHADOW_BIT - 1))));
    }

    public static void setElement(final MemorySegment m, final long o, final int i, final int value)
    {
        m.set(I32, o + PAYLOAD_OFFSET + (long)i * Integer.BYTES, value);
    }

    /**
     * Checks what every receiver checks before trusting any field: the message is long enough for the header, the
     * version is known and the length equals the header plus {@code elementCount} lanes.
     *
     * @return {@link WireCheck#OK} or the reason the message is malformed.
     */
    public static int check(final MemorySegment m, final long o, final int length)
    {
        if (length < LENGTH)
        {
            return WireCheck.TOO_SHORT;
        }
        if (version(m, o) != VERSION)
        {
            return WireCheck.BAD_VERSION;
        }
        if (length != messageLength(elementCount(m, o)))
        {
            return WireCheck.LENGTH_MISMATCH;
        }
        return WireCheck.OK;
    }
}
