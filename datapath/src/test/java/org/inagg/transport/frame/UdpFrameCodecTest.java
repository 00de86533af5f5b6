package org.inagg.transport.frame;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one Ethernet / IPv4 / UDP codec: what it writes is what RFC 791/768 lay out, and what it accepts on receive. */
@Timeout(10)
class UdpFrameCodecTest
{
    private static final long SRC_MAC = 0x0200_0A00_0001L;
    private static final long DST_MAC = 0x0200_0A00_0002L;
    private static final int SRC_IP = 0x0A00_0001;
    private static final int DST_IP = 0x0A00_0002;
    private static final int SRC_PORT = 40_000;
    private static final int DST_PORT = 47_000;
    private static final int MESSAGE = 100;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    @Test
    void shouldWriteTheHeadersFieldByFieldAsTheRfcsLayThemOut()
    {
        final MemorySegment frame = frame(MESSAGE);
        final byte[] actual = frame.asSlice(0, UdpFrameCodec.HEADERS_LENGTH).toArray(ValueLayout.JAVA_BYTE);
        assertThat(actual).isEqualTo(expectedHeaders(MESSAGE));
    }

    @Test
    void shouldGiveTheSameBytesFromATemplateCompletedPerFrame()
    {
        final MemorySegment template = MemorySegment.ofArray(new byte[UdpFrameCodec.HEADERS_LENGTH]);
        final int sum = UdpFrameCodec.writeTemplate(template, 0, SRC_MAC, SRC_IP, SRC_PORT, DST_MAC, DST_IP, DST_PORT);
        for (final int length : new int[] {0, 1, 20, 1024, 65_507})
        {
            final MemorySegment copy = MemorySegment.ofArray(new byte[UdpFrameCodec.HEADERS_LENGTH]);
            copy.copyFrom(template);
            UdpFrameCodec.completeLengths(copy, 0, sum, length);
            assertThat(copy.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expectedHeaders(length));
        }
    }

    @Test
    void shouldParseWhatItWritesAndReadTheSource()
    {
        final MemorySegment frame = frame(MESSAGE);
        final int udp = UdpFrameCodec.udpOffset(frame, 0, (int)frame.byteSize(), DST_IP, DST_PORT);
        assertThat(udp).isEqualTo(UdpFrameCodec.UDP_OFFSET);
        assertThat(UdpFrameCodec.sourceMac(frame, 0)).isEqualTo(SRC_MAC);
        assertThat(UdpFrameCodec.sourceIp(frame, 0)).isEqualTo(SRC_IP);
        assertThat(UdpFrameCodec.sourcePort(frame, 0, udp)).isEqualTo(SRC_PORT);
        assertThat(UdpFrameCodec.messageLength(frame, 0, udp)).isEqualTo(MESSAGE);
    }

    @Test
    void shouldAcceptIpv4OptionsAndAnEthernetTrailer()
    {
        final int options = 8;
        final byte[] plain = frame(MESSAGE).toArray(ValueLayout.JAVA_BYTE);
        final ByteBuffer b = ByteBuffer.allocate(plain.length + options + 6);
        b.put(plain, 0, 34).put(new byte[options]).put(plain, 34, plain.length - 34);
        b.put(14, (byte)(0x45 + options / 4)).putShort(16, (short)(28 + options + MESSAGE)).putShort(24, (short)0);
        b.putShort(24, (short)~checksumOf(b, 20 + options));
        final MemorySegment frame = MemorySegment.ofArray(b.array());
        final int udp = UdpFrameCodec.udpOffset(frame, 0, b.capacity(), DST_IP, DST_PORT);
        assertThat(udp).isEqualTo(UdpFrameCodec.UDP_OFFSET + options);
        assertThat(UdpFrameCodec.messageLength(frame, 0, udp)).isEqualTo(MESSAGE);
    }

    @Test
    void shouldRefuseWhatIsNotIpv4UdpToUsOrIsMalformed()
    {
        assertRefused(UdpFrameCodec.HEADERS_LENGTH - 1, 0, (short)0); // shorter than the headers
        assertRefused(0, 12, (short)0x86DD); // IPv6
        assertRefused(0, 14, (short)0x4600); // IHL 6 without options: checksum and lengths disagree
        assertRefused(0, 16, (short)(28 + MESSAGE + 1)); // total length beyond the frame
        assertRefused(0, 20, (short)0x2000); // more fragments
        assertRefused(0, 22, (short)(64 << 8 | 6)); // TCP
        assertRefused(0, 24, (short)0x1234); // bad header checksum
        assertRefused(0, 30, (short)0x0B00); // another destination address
        assertRefused(0, 36, (short)(DST_PORT + 1)); // another UDP port
        assertRefused(0, 38, (short)7); // UDP length below its header
        assertRefused(0, 38, (short)(8 + MESSAGE + 1)); // UDP length beyond the datagram
    }

    private static void assertRefused(final int shorten, final int at, final short value)
    {
        final MemorySegment frame = frame(MESSAGE);
        if (shorten == 0)
        {
            frame.set(U16, at, value);
        }
        final int length = shorten == 0 ? (int)frame.byteSize() : shorten;
        assertThat(UdpFrameCodec.udpOffset(frame, 0, length, DST_IP, DST_PORT))
            .as("field at %d = %04x, frame of %d bytes", at, value, length).isEqualTo(UdpFrameCodec.NOT_FOR_US);
    }

    private static MemorySegment frame(final int messageLength)
    {
        final MemorySegment frame = MemorySegment.ofArray(new byte[UdpFrameCodec.HEADERS_LENGTH + messageLength]);
        UdpFrameCodec.write(frame, 0, SRC_MAC, SRC_IP, SRC_PORT, DST_MAC, DST_IP, DST_PORT, messageLength);
        return frame;
    }

    /** The 42 header bytes, written out field by field as RFC 791/768 lay them out, checksum by RFC 1071. */
    private static byte[] expectedHeaders(final int messageLength)
    {
        final ByteBuffer b = ByteBuffer.allocate(42);
        b.putShort((short)(DST_MAC >>> 32)).putInt((int)DST_MAC).putShort((short)(SRC_MAC >>> 32)).putInt((int)SRC_MAC);
        b.putShort((short)0x0800);
        b.put((byte)0x45).put((byte)0).putShort((short)(28 + messageLength)).putShort((short)0)
            .putShort((short)0x4000).put((byte)64).put((byte)17).putShort((short)0).putInt(SRC_IP).putInt(DST_IP);
        b.putShort(24, (short)~checksumOf(b, 20));
        b.putShort((short)SRC_PORT).putShort((short)DST_PORT).putShort((short)(8 + messageLength)).putShort((short)0);
        return b.array();
    }

    private static int checksumOf(final ByteBuffer b, final int ipHeaderLength)
    {
        long sum = 0;
        for (int i = 14; i < 14 + ipHeaderLength; i += 2)
        {
            sum += ((b.get(i) & 0xFF) << 8) | (b.get(i + 1) & 0xFF);
        }
        while ((sum >> 16) != 0)
        {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        return (int)sum;
    }
}
