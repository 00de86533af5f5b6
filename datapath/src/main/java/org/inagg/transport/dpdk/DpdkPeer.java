package org.inagg.transport.dpdk;

import java.util.Locale;

/**
 * A peer of a {@link DpdkTransport}: its Ethernet and IPv4 addresses, its UDP port, and the link (index into the
 * transport's port queues) it is reached through.
 *
 * @param mac     48-bit MAC address in the low bits.
 * @param ip      IPv4 address, most significant byte first (10.0.0.1 is {@code 0x0A000001}).
 * @param udpPort UDP port.
 * @param link    index of the link in {@link DpdkTransportConfig#links()}.
 */
public record DpdkPeer(long mac, int ip, int udpPort, int link)
{
    public DpdkPeer
    {
        if ((mac & ~0xFFFF_FFFF_FFFFL) != 0)
        {
            throw new IllegalArgumentException("MAC address has more than 48 bits: " + Long.toHexString(mac));
        }
        if (udpPort < 1 || udpPort > 0xFFFF)
        {
            throw new IllegalArgumentException("UDP port must be 1..65535, got " + udpPort);
        }
        if (link < 0)
        {
            throw new IllegalArgumentException("link must not be negative, got " + link);
        }
    }

    /**
     * Parses {@code MAC/IP:PORT[@LINK]}, e.g. {@code 02:00:00:00:00:01/10.0.0.1:9000} or
     * {@code 02:00:00:00:00:01/10.0.0.1:9000@1}.
     */
    public static DpdkPeer parse(final String text)
    {
        final int slash = text.indexOf('/');
        final int colon = text.lastIndexOf(':');
        if (slash < 0 || colon < slash)
        {
            throw new IllegalArgumentException("a DPDK peer is MAC/IP:PORT[@LINK], got '" + text + "'");
        }
        final int at = text.indexOf('@', colon);
        try
        {
            final int port = Integer.parseInt(text.substring(colon + 1, at < 0 ? text.length() : at));
            final int link = at < 0 ? 0 : Integer.parseInt(text.substring(at + 1));
            return new DpdkPeer(parseMac(text.substring(0, slash)), parseIp(text.substring(slash + 1, colon)), port,
                link);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("a DPDK peer is MAC/IP:PORT[@LINK], got '" + text + "'", ex);
        }
    }

    /** Parses {@code aa:bb:cc:dd:ee:ff} (or with dashes). */
    public static long parseMac(final String text)
    {
        final String[] parts = text.split("[:-]");
        if (parts.length != 6)
        {
            throw new IllegalArgumentException("a MAC address has six hex bytes, got '" + text + "'");
        }
        long mac = 0;
        for (final String part : parts)
        {
            final int b = Integer.parseInt(part, 16);
            if (part.length() > 2 || b < 0 || b > 0xFF)
            {
                throw new IllegalArgumentException("bad byte '" + part + "' in MAC address '" + text + "'");
            }
            mac = mac << 8 | b;
        }
        return mac;
    }

    /** Parses a dotted-quad IPv4 address. */
    public static int parseIp(final String text)
    {
        final String[] parts = text.split("\\.");
        if (parts.length != 4)
        {
            throw new IllegalArgumentException("an IPv4 address is four dotted bytes, got '" + text + "'");
        }
        int ip = 0;
        for (final String part : parts)
        {
            final int b;
            try
            {
                b = Integer.parseInt(part);
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("bad byte '" + part + "' in IPv4 address '" + text + "'", ex);
            }
            if (b < 0 || b > 0xFF)
            {
                throw new IllegalArgumentException("bad byte '" + part + "' in IPv4 address '" + text + "'");
            }
            ip = ip << 8 | b;
        }
        return ip;
    }

    public static String formatMac(final long mac)
    {
        final StringBuilder out = new StringBuilder(17);
        for (int shift = 40; shift >= 0; shift -= 8)
        {
            out.append(String.format(Locale.ROOT, "%02x", (mac >>> shift) & 0xFF));
            if (shift > 0)
            {
                out.append(':');
            }
        }
        return out.toString();
    }

    public static String formatIp(final int ip)
    {
        return (ip >>> 24) + "." + ((ip >>> 16) & 0xFF) + "." + ((ip >>> 8) & 0xFF) + "." + (ip & 0xFF);
    }

    @Override
    public String toString()
    {
        return formatMac(mac) + "/" + formatIp(ip) + ":" + udpPort + (link == 0 ? "" : "@" + link);
    }
}
