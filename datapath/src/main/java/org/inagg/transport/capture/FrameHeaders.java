package org.inagg.transport.capture;

import java.lang.foreign.MemorySegment;

import org.inagg.transport.UdpTransport;

/**
 * The link, network and transport headers that a capture puts in front of each inagg message to make it an Ethernet
 * frame. A {@link org.inagg.transport.Transport} carries bare messages (header and lanes); how the frame around one
 * looked, or would have looked, depends on the transport:
 * <ul>
 *   <li>{@link #udp(UdpTransport)}: Ethernet / IPv4 / UDP headers built from the socket's real addresses and ports
 *       (see {@link SyntheticFrameHeaders});</li>
 *   <li>{@link #inProcess(int)}: the same headers with addresses synthesized from endpoint indices;</li>
 *   <li>{@link #inPlace()}: the transport already built the frame in front of the message (DPDK): its bytes are
 *       taken as they are (see {@link InPlaceFrameHeaders}).</li>
 * </ul>
 * Implementations allocate nothing per message.
 */
public interface FrameHeaders
{
    /**
     * Bytes of headers in front of this message in its frame.
     *
     * @param memory   memory holding the message.
     * @param offset   offset of the inagg header in {@code memory}.
     * @param length   length of the message (inagg header and lanes).
     * @param peer     the peer it goes to or comes from (the transport's number; -1 for an unregistered sender).
     * @param outbound true for a message this node sends, false for one it receives.
     */
    int length(MemorySegment memory, long offset, int length, int peer, boolean outbound);

    /**
     * Writes the {@code headersLength} bytes that {@link #length} stated for this message at {@code at} in
     * {@code destination}.
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    void write(
        MemorySegment memory, long offset, int length, int peer, boolean outbound,
        MemorySegment destination, long at, int headersLength);

    /** Headers with the real addresses and ports of a UDP transport's socket and peers. */
    static FrameHeaders udp(final UdpTransport transport)
    {
        return SyntheticFrameHeaders.forUdp(transport);
    }

    /**
     * Headers with addresses synthesized from in-process endpoint indices: endpoint {@code e} is
     * {@link SyntheticFrameHeaders#inProcessIpv4(int)} (10.0.0.1 for endpoint 0) with MAC
     * {@link SyntheticFrameHeaders#macOf(int)}, and every endpoint uses UDP port
     * {@link SyntheticFrameHeaders#IN_PROCESS_UDP_PORT}.
     *
     * @param endpoint this transport's endpoint index in its {@link org.inagg.transport.InProcessNetwork}.
     */
    static FrameHeaders inProcess(final int endpoint)
    {
        return SyntheticFrameHeaders.forInProcess(endpoint);
    }

    /** The frame's own headers, found in memory in front of the message (DPDK mbufs). */
    static FrameHeaders inPlace()
    {
        return InPlaceFrameHeaders.INSTANCE;
    }
}
