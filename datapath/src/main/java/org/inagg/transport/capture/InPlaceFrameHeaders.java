package org.inagg.transport.capture;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Headers of a transport that builds and parses whole Ethernet frames in place (the DPDK transport): the message's
 * frame starts in the same memory in front of it, and its bytes are captured as they are. Frames this node sends have
 * 42 bytes of headers (Ethernet 14, IPv4 20, UDP 8); a received frame may carry IPv4 options, so the IPv4 header
 * length is found by looking back from the UDP header for the version-4 byte whose IHL puts it there, preceded by
 * EtherType 0x0800 (IHL 5 first: one check for the usual frame). Only for transports whose message memory is preceded by its frame: anything else reads memory it does not
 * own.
 */
public final class InPlaceFrameHeaders implements FrameHeaders
{
    static final InPlaceFrameHeaders INSTANCE = new InPlaceFrameHeaders();

    private static final int ETHERNET = 14;
    private static final int UDP = 8;
    private static final int MIN_IHL = 5;
    private static final int MAX_IHL = 15;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private InPlaceFrameHeaders()
    {
    }

    @Override
    public int length(
        final MemorySegment memory, final long offset, final int length, final int peer, final boolean outbound)
    {
        for (int ihl = MIN_IHL; ihl <= MAX_IHL; ihl++)
        {
            final long ip = offset - UDP - 4L * ihl;
            if (memory.get(ValueLayout.JAVA_BYTE, ip) == (byte)(0x40 | ihl) && memory.get(U16, ip - 2) == (short)0x0800)
            {
                return ETHERNET + 4 * ihl + UDP;
            }
        }
        return ETHERNET + 4 * MIN_IHL + UDP;
    }

    @Override
    public void write(
        final MemorySegment memory, final long offset, final int length, final int peer, final boolean outbound,
        final MemorySegment destination, final long at, final int headersLength)
    {
        MemorySegment.copy(memory, offset - headersLength, destination, at, headersLength);
    }
}
