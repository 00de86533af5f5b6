package org.inagg.transport.frame;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import org.inagg.wire.InaggHeader;

/**
 * Encoder and decoder of the 42 bytes of Ethernet, IPv4 and UDP headers in front of each inagg message on a wire:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  Destination MAC (bytes 0-3)                  |  0
 *  +-------------------------------+-------------------------------+
 *  |  Destination MAC (bytes 4-5)  |    Source MAC (bytes 0-1)     |  4
 *  +-------------------------------+-------------------------------+
 *  |                    Source MAC (bytes 2-5)                     |  8
 *  +-------------------------------+-------+-------+---------------+
 *  |      EtherType = 0x0800       | Ver=4 | IHL=5 |   DSCP/ECN=0  | 12  IPv4 from 14
 *  +-------------------------------+-------+-------+---------------+
 *  |     Total Length = 28 + m     |       Identification = 0      | 16
 *  +-----+-------------------------+---------------+---------------+
 *  | DF  |   Fragment Offset = 0   |    TTL = 64   | Protocol = 17 | 20
 *  +-----+-------------------------+---------------+---------------+
 *  |        Header Checksum        |   Source IPv4 (bytes 0-1)     | 24
 *  +-------------------------------+-------------------------------+
 *  |    Source IPv4 (bytes 2-3)    | Destination IPv4 (bytes 0-1)  | 28
 *  +-------------------------------+-------------------------------+
 *  | Destination IPv4 (bytes 2-3)  |       UDP Source Port         | 32  UDP from 34
 *  +-------------------------------+-------------------------------+
 *  |     UDP Destination Port      |     UDP Length = 8 + m        | 36
 *  +-------------------------------+-------------------------------+
 *  |       UDP Checksum = 0        |   inagg message (m bytes) ... | 40  message from 42
 *  +-------------------------------+-------------------------------+
 * </pre>
 * The message is an {@link InaggHeader} and its lanes. Frames are written without IPv4 options and with UDP checksum
 * 0 ("none", allowed over IPv4); the IPv4 header checksum is RFC 1071's. Writing is split for senders that keep one
 * frame per peer: {@link #writeTemplate} writes everything but the three lengths and the checksum and returns the
 * header's sum so far, {@link #completeLengths} fills those in per frame (three 16-bit stores and a checksum fold);
 * {@link #write} does both.
 * <p>
 * {@link #udpOffset} checks a received frame (single-segment IPv4 with any header length, not fragmented, valid header
 * checksum, UDP to a given address and port, consistent lengths; the destination MAC is not checked) and says where
 * its UDP header starts; the accessors read its fields. All methods are static, allocate nothing and never throw on
 * bytes within the given frame length.
 */
public final class UdpFrameCodec
{
    /** Bytes of Ethernet, IPv4 (without options) and UDP headers in front of each message. */
    public static final int HEADERS_LENGTH = InaggHeader.L2_L4_HEADERS_LENGTH;
    /** Bytes of the Ethernet header: where the IPv4 header starts. */
    public static final int ETHERNET_LENGTH = 14;
    /** Bytes of an IPv4 header without options. */
    public static final int IPV4_LENGTH = 20;
    /** Bytes of the UDP header. */
    public static final int UDP_LENGTH = 8;
    /** Where the UDP header starts in a frame this codec writes. */
    public static final int UDP_OFFSET = ETHERNET_LENGTH + IPV4_LENGTH;
    public static final int ETHERTYPE_IPV4 = 0x0800;
    public static final int PROTOCOL_UDP = 17;
    /** What {@link #udpOffset} answers for a frame that is not IPv4/UDP to us, or is malformed. */
    public static final int NOT_FOR_US = -1;

    private static final int IP = ETHERNET_LENGTH;
    private static final int UDP = UDP_OFFSET;
    private static final int TTL = 64;
    private static final int DONT_FRAGMENT = 0x4000;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private UdpFrameCodec()
    {
    }

    /**
     * Writes the 42 header bytes of a frame with zero in the IPv4 total length, header checksum and UDP length, and
     * returns the one's-complement sum of the IPv4 header so far (unfolded), for {@link #completeLengths}.
     *
     * @param srcMac 48-bit MAC in the low bits; IPv4 addresses most significant byte first.
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public static int writeTemplate(
        final MemorySegment memory, final long at, final long srcMac, final int srcIp, final int srcPort,
        final long dstMac, final int dstIp, final int dstPort)
    {
        memory.set(U16, at, (short)(dstMac >>> 32));
        memory.set(U32, at + 2, (int)dstMac);
        memory.set(U16, at + 6, (short)(srcMac >>> 32));
        memory.set(U32, at + 8, (int)srcMac);
        memory.set(U16, at + 12, (short)ETHERTYPE_IPV4);
        memory.set(U16, at + IP, (short)0x4500);
        memory.set(U16, at + IP + 2, (short)0);
        memory.set(U16, at + IP + 4, (short)0);
        memory.set(U16, at + IP + 6, (short)DONT_FRAGMENT);
        memory.set(U16, at + IP + 8, (short)(TTL << 8 | PROTOCOL_UDP));
        memory.set(U16, at + IP + 10, (short)0);
        memory.set(U32, at + IP + 12, srcIp);
        memory.set(U32, at + IP + 16, dstIp);
        memory.set(U16, at + UDP, (short)srcPort);
        memory.set(U16, at + UDP + 2, (short)dstPort);
        memory.set(U16, at + UDP + 4, (short)0);
        memory.set(U16, at + UDP + 6, (short)0);
        return sum(memory, at + IP, IPV4_LENGTH);
    }

    /**
     * Fills in the IPv4 total length, header checksum and UDP length of a frame whose other headers
     * {@link #writeTemplate} wrote (or copied from a template) with sum {@code partialSum}, for a message of
     * {@code messageLength} bytes.
     */
    public static void completeLengths(
        final MemorySegment memory, final long at, final int partialSum, final int messageLength)
    {
        final int ipLength = IPV4_LENGTH + UDP_LENGTH + messageLength;
        memory.set(U16, at + IP + 2, (short)ipLength);
        memory.set(U16, at + IP + 10, (short)~fold(partialSum + ipLength));
        memory.set(U16, at + UDP + 4, (short)(UDP_LENGTH + messageLength));
    }

    /** Writes the 42 header bytes of a frame carrying {@code messageLength} bytes of message, checksum included. */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public static void write(
        final MemorySegment memory, final long at, final long srcMac, final int srcIp, final int srcPort,
        final long dstMac, final int dstIp, final int dstPort, final int messageLength)
    {
        completeLengths(memory, at, writeTemplate(memory, at, srcMac, srcIp, srcPort, dstMac, dstIp, dstPort),
            messageLength);
    }

    /**
     * Checks a received frame of {@code frameLength} bytes at {@code frame}: Ethernet, IPv4 (version 4, any header
     * length, not fragmented, header checksum valid, protocol UDP, destination {@code localIp}, total length within
     * the frame), UDP to {@code localPort} with a length within the IPv4 datagram.
     *
     * @return the offset of the UDP header from {@code frame}, or {@link #NOT_FOR_US}.
     */
    public static int udpOffset(
        final MemorySegment memory, final long frame, final int frameLength, final int localIp, final int localPort)
    {
        if (frameLength < HEADERS_LENGTH || Short.toUnsignedInt(memory.get(U16, frame + 12)) != ETHERTYPE_IPV4)
        {
            return NOT_FOR_US;
        }
        final int versionAndLength = memory.get(ValueLayout.JAVA_BYTE, frame + IP);
        final int ipHeaderLength = (versionAndLength & 0x0F) << 2;
        final int ipLength = Short.toUnsignedInt(memory.get(U16, frame + IP + 2));
        if ((versionAndLength & 0xF0) != 0x40 || ipHeaderLength < IPV4_LENGTH
            || ipLength < ipHeaderLength + UDP_LENGTH || IP + ipLength > frameLength
            || memory.get(ValueLayout.JAVA_BYTE, frame + IP + 9) != PROTOCOL_UDP
            || (memory.get(U16, frame + IP + 6) & 0x3FFF) != 0
            || memory.get(U32, frame + IP + 16) != localIp
            || fold(sum(memory, frame + IP, ipHeaderLength)) != 0xFFFF)
        {
            return NOT_FOR_US;
        }
        final int udp = IP + ipHeaderLength;
        final int udpLength = Short.toUnsignedInt(memory.get(U16, frame + udp + 4));
        if (Short.toUnsignedInt(memory.get(U16, frame + udp + 2)) != localPort || udpLength < UDP_LENGTH
            || udpLength > ipLength - ipHeaderLength)
        {
            return NOT_FOR_US;
        }
        return udp;
    }

    /** The source MAC of a frame, in the low 48 bits. */
    public static long sourceMac(final MemorySegment memory, final long frame)
    {
        return Short.toUnsignedLong(memory.get(U16, frame + 6)) << 32
            | Integer.toUnsignedLong(memory.get(U32, frame + 8));
    }

    /** The source IPv4 address of a frame, most significant byte first. */
    public static int sourceIp(final MemorySegment memory, final long frame)
    {
        return memory.get(U32, frame + IP + 12);
    }

    /** The UDP source port of a frame whose UDP header is at {@code udpOffset} ({@link #udpOffset}). */
    public static int sourcePort(final MemorySegment memory, final long frame, final int udpOffset)
    {
        return Short.toUnsignedInt(memory.get(U16, frame + udpOffset));
    }

    /** Bytes of message (UDP payload) of a frame whose UDP header is at {@code udpOffset} ({@link #udpOffset}). */
    public static int messageLength(final MemorySegment memory, final long frame, final int udpOffset)
    {
        return Short.toUnsignedInt(memory.get(U16, frame + udpOffset + 4)) - UDP_LENGTH;
    }

    /** The one's-complement sum of the {@code length} bytes (even) at {@code at}, unfolded. */
    private static int sum(final MemorySegment memory, final long at, final int length)
    {
        int sum = 0;
        for (int i = 0; i < length; i += 2)
        {
            sum += Short.toUnsignedInt(memory.get(U16, at + i));
        }
        return sum;
    }

    private static int fold(final int sum)
    {
        int folded = (sum & 0xFFFF) + (sum >>> 16);
        folded = (folded & 0xFFFF) + (folded >>> 16);
        return folded;
    }
}
