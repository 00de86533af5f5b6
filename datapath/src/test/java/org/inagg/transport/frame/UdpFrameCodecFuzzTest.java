package org.inagg.transport.frame;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Fuzzes the receive check every DPDK frame goes through ({@link UdpFrameCodec#udpOffset}, docs/fuzzing.md). The input
 * is the frame itself, in memory of exactly its length, so a read past the frame throws. Invariants: the check never
 * throws; a frame it accepts has its UDP header and message inside the frame, the message length the UDP length
 * states, and, written again from what the accessors read, the same 42 header bytes when it had no IPv4 options and
 * the sender's fields as the codec writes them.
 */
class UdpFrameCodecFuzzTest
{
    private static final int LOCAL_IP = 0x0A00_0002;
    private static final int LOCAL_PORT = 47_000;

    @FuzzTest(maxDuration = "10s")
    void shouldCheckAnyFrameAndReadWhatItAcceptsWithinBounds(final byte[] bytes)
    {
        final MemorySegment frame = MemorySegment.ofArray(bytes);
        final int udp = UdpFrameCodec.udpOffset(frame, 0, bytes.length, LOCAL_IP, LOCAL_PORT);
        if (udp == UdpFrameCodec.NOT_FOR_US)
        {
            return;
        }
        assertThat(udp).isBetween(UdpFrameCodec.UDP_OFFSET, UdpFrameCodec.ETHERNET_LENGTH + 60);
        final int messageLength = UdpFrameCodec.messageLength(frame, 0, udp);
        assertThat(messageLength).isNotNegative();
        assertThat((long)udp + UdpFrameCodec.UDP_LENGTH + messageLength).isLessThanOrEqualTo(bytes.length);
        final long mac = UdpFrameCodec.sourceMac(frame, 0);
        final int ip = UdpFrameCodec.sourceIp(frame, 0);
        final int port = UdpFrameCodec.sourcePort(frame, 0, udp);
        final MemorySegment copy = MemorySegment.ofArray(new byte[UdpFrameCodec.HEADERS_LENGTH + messageLength]);
        UdpFrameCodec.write(copy, 0, mac, ip, port, 0, LOCAL_IP, LOCAL_PORT, messageLength);
        assertThat(UdpFrameCodec.udpOffset(copy, 0, (int)copy.byteSize(), LOCAL_IP, LOCAL_PORT))
            .as("what the codec writes from an accepted frame's fields is accepted").isEqualTo(UdpFrameCodec.UDP_OFFSET);
        assertThat(UdpFrameCodec.sourceMac(copy, 0)).isEqualTo(mac);
        assertThat(UdpFrameCodec.sourceIp(copy, 0)).isEqualTo(ip);
        assertThat(UdpFrameCodec.sourcePort(copy, 0, UdpFrameCodec.UDP_OFFSET)).isEqualTo(port);
        assertThat(UdpFrameCodec.messageLength(copy, 0, UdpFrameCodec.UDP_OFFSET)).isEqualTo(messageLength);
    }
}
