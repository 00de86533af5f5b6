package org.inagg.p4.control;

/**
 * The switch's own addresses: the source of every result, JOIN_ACK and REJECT it sends (UDP source port
 * {@link InaggP4#UDP_PORT}); workers address their messages to them.
 */
public record SwitchAddress(long mac, int ipv4)
{
    public SwitchAddress
    {
        if ((mac & ~0xFFFF_FFFF_FFFFL) != 0)
        {
            throw new IllegalArgumentException("MAC address wider than 48 bits: 0x" + Long.toHexString(mac));
        }
    }
}
