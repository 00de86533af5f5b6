package org.inagg.perf.peers;

import org.inagg.wire.InaggHeader;

/**
 * What links allow: the least time an all-reduce can take when each rank's link carries R bits per second in each
 * direction at once and nothing else limits it.
 * <ul>
 * <li>A ring (gloo, Open MPI for large tensors): each rank sends and receives 2(N-1)/N of the tensor, so
 *     {@code 2(N-1)/N * S / R}; the TCP/IP headers (about 3 % at a 1500-byte MTU) are left out, which makes the bound
 *     a little low and the fraction of it a host-based peer reaches a little pessimistic.</li>
 * <li>In-network aggregation: each host sends its tensor once and receives the sum once, at the same time, in packets
 *     of {@code lanes} int32 lanes behind Ethernet, IPv4, UDP and inagg headers, so
 *     {@code S * frame / payload / R}, independent of N.</li>
 * </ul>
 * The ratio of the two, {@code 2(N-1)/N * payload / frame}, is what INA can win on links at most: 1.41x at 4 hosts and
 * 1.65x at 8 with 256-lane packets.
 */
public final class LinkBounds
{
    /** Ethernet, IPv4 and UDP headers, and inagg's, in front of every aggregation packet's lanes (no FCS: tbf on a
     * veth counts what the kernel hands the device). */
    public static final int INA_HEADERS = InaggHeader.L2_L4_HEADERS_LENGTH + InaggHeader.LENGTH;

    private LinkBounds()
    {
    }

    /** {@code 2(N-1)/N * S / R} seconds. */
    public static double ringSeconds(final int ranks, final long bytes, final double bitsPerSecond)
    {
        return 2.0 * (ranks - 1) / ranks * bytes * 8 / bitsPerSecond;
    }

    /** {@code S * (headers + 4 lanes) / (4 lanes) / R} seconds. */
    public static double inaSeconds(final long bytes, final int lanes, final double bitsPerSecond)
    {
        final double payload = 4.0 * lanes;
        return bytes * (INA_HEADERS + payload) / payload * 8 / bitsPerSecond;
    }
}
