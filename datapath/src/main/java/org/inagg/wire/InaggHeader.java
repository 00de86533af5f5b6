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
 *  |   Priority    |    Status     |           Reserved            | 16
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
 * In {@link MessageType#JOIN} messages Sequence holds the worker count the worker was configured with. In
 * {@link MessageType#JOIN_ACK} messages the switch answers with the job's parameters: Sequence = number of workers,
 * Slot Index = slots in the job's pool (the window), Reserved = lanes per packet.
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
    public static final int PAYLOAD_OFFSET = LENGTH;

    public static final int FLAG_RESULT = 0x01;
    public static final int FLAG_RETRANSMIT = 0x02;
    public static final int FLAG_INT32 = 0x04;

    public static final int SHADOW_BIT = 0x8000;
    public static final int MAX_SLOTS = 0x8000;
    public static final int MAX_JOB_ID = 0xFFFF;
    public static final int MAX_WORKER_ID = 0xFFFF;
    public static final int MAX_ELEMENT_COUNT = 0xFFFF;
    public static final byte NO_EXPONENT = Byte.MIN_VALUE;

    /** Bytes of Ethernet (14), IPv4 (20) and UDP (8) headers in front of the inagg header on the wire. */
    public static final int L2_L4_HEADERS_LENGTH = 14 + 20 + 8;
    /** Lanes per packet that fill a 1500-byte MTU: (1500 - 20 - 8 - 20) / 4. */
    public static final int MAX_ELEMENTS_FOR_1500_MTU = (1500 - 20 - 8 - LENGTH) / Integer.BYTES;

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

    public static int priority(final MemorySegment m, final long o)
    {
        return m.get(ValueLayout.JAVA_BYTE, o + PRIORITY_OFFSET) & 0xFF;
    }

    public static int status(final MemorySegment m, final long o)
    {
        return m.get(ValueLayout.JAVA_BYTE, o + STATUS_OFFSET) & 0xFF;
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
        write(m, o, MessageType.JOIN_ACK, FLAG_RESULT, jobId, worker, slots, 0, workers, 0, 0, NO_EXPONENT, 0);
        setJoinLanes(m, o, lanes);
    }

    /** Writes a REJECT of a JOIN: FLAG_RESULT, the job and worker id, the {@link RejectReason} in Status. */
    public static void writeReject(final MemorySegment m, final long o, final int jobId, final int worker,
        final int reason)
    {
        write(m, o, MessageType.REJECT, FLAG_RESULT, jobId, worker, 0, 0, 0, 0, 0, NO_EXPONENT, 0);
        setStatus(m, o, reason);
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
