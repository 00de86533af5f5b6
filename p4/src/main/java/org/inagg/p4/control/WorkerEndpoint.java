package org.inagg.p4.control;

import org.inagg.wire.InaggHeader;

/**
 * Where a worker lives, as the switch knows it: the only source allowed to speak for its worker id, and the address its
 * results go to.
 *
 * @param peer    the worker's transport peer on a software switch.
 * @param port    the switch port (bmv2 port number, Tofino dev port) its results leave by.
 * @param mac     its Ethernet address (48 bits).
 * @param ipv4    its IPv4 address; the P4 programs accept the worker's messages only from this source address...
 * @param udpPort ...and this UDP source port; results go to this UDP port.
 * @param joinCredential the secret the worker's JOINs must show (docs/security.md; the P4 programs' table
 *                       {@code join_credential}), or {@link InaggHeader#NO_CREDENTIAL}: none required. The controller
 *                       gives every worker one; a job the operator installs without it (static {@code --source}, lab,
 *                       tests) has none.
 */
public record WorkerEndpoint(int peer, int port, long mac, int ipv4, int udpPort, long joinCredential)
{
    public WorkerEndpoint
    {
        if (peer < 0)
        {
            throw new IllegalArgumentException("peer must be >= 0, got " + peer);
        }
        if (port < 0 || port > 511)
        {
            throw new IllegalArgumentException("switch port must be in 0..511 (9 bits), got " + port);
        }
        if ((mac & ~0xFFFF_FFFF_FFFFL) != 0)
        {
            throw new IllegalArgumentException("MAC address wider than 48 bits: 0x" + Long.toHexString(mac));
        }
        if (udpPort < 0 || udpPort > 0xFFFF)
        {
            throw new IllegalArgumentException("UDP port must be in 0..65535, got " + udpPort);
        }
    }

    /** A worker whose JOINs need no credential. */
    public WorkerEndpoint(final int peer, final int port, final long mac, final int ipv4, final int udpPort)
    {
        this(peer, port, mac, ipv4, udpPort, InaggHeader.NO_CREDENTIAL);
    }

    /** This worker with {@code credential} as its JOIN credential. */
    public WorkerEndpoint withJoinCredential(final long credential)
    {
        return new WorkerEndpoint(peer, port, mac, ipv4, udpPort, credential);
    }

    @Override
    public String toString()
    {
        // The credential is a secret: never in a log line or an exception.
        return "WorkerEndpoint[peer=" + peer + ", port=" + port + ", mac=" + formatMac(mac) + ", ipv4="
            + formatIpv4(ipv4) + ", udpPort=" + udpPort + ", joinCredential="
            + (joinCredential == InaggHeader.NO_CREDENTIAL ? "none" : "set") + "]";
    }

    /** {@code 02:00:00:00:00:01} form. */
    public static String formatMac(final long mac)
    {
        final StringBuilder text = new StringBuilder(17);
        for (int shift = 40; shift >= 0; shift -= 8)
        {
            final int octet = (int)(mac >>> shift) & 0xFF;
            text.append(Character.forDigit(octet >>> 4, 16)).append(Character.forDigit(octet & 0xF, 16));
            if (shift > 0)
            {
                text.append(':');
            }
        }
        return text.toString();
    }

    /** {@code 10.0.0.1} form. */
    public static String formatIpv4(final int ipv4)
    {
        return (ipv4 >>> 24) + "." + ((ipv4 >>> 16) & 0xFF) + "." + ((ipv4 >>> 8) & 0xFF) + "." + (ipv4 & 0xFF);
    }

    /** {@code 0x} and 16 hex digits: a JOIN credential as the P4 table rows take it. */
    static String hexCredential(final long credential)
    {
        return String.format("0x%016x", credential);
    }

    public static long parseMac(final String text)
    {
        final String[] octets = text.split(":");
        if (octets.length != 6)
        {
            throw new IllegalArgumentException("not a MAC address: " + text);
        }
        long mac = 0;
        for (final String octet : octets)
        {
            mac = (mac << 8) | Integer.parseInt(octet, 16);
        }
        return mac;
    }

    public static int parseIpv4(final String text)
    {
        final String[] octets = text.split("\\.");
        if (octets.length != 4)
        {
            throw new IllegalArgumentException("not an IPv4 address: " + text);
        }
        int ipv4 = 0;
        for (final String octet : octets)
        {
            final int value = Integer.parseInt(octet);
            if (value < 0 || value > 255)
            {
                throw new IllegalArgumentException("not an IPv4 address: " + text);
            }
            ipv4 = (ipv4 << 8) | value;
        }
        return ipv4;
    }
}
