package org.inagg.services.worker;

import java.util.Locale;

import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.controller.ControllerClient;
import org.inagg.transport.InterfaceMtu;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;

/**
 * Whether a job's packets fit the MTU of the interface a worker (or a host's agent) sends on toward its switch. A
 * switch, and a controller that asks it, size packets by the switch's own interface; a worker behind a smaller MTU (an
 * overlay's 1450 bytes) would have the kernel fragment every packet, which works but is slower, and one lost fragment
 * loses the packet. Checked once, at join; never fails the join.
 */
public final class PacketFit
{
    private PacketFit()
    {
    }

    /**
     * @param udp   the worker's socket; its peer 0 is the switch.
     * @param lanes the job's lanes per packet (from the switch's JOIN_ACK).
     * @return what does not fit (the sizes, the interface, the lanes that would fit), for the caller to print or log as
     *         a warning; null when the packets fit, or when the route toward the switch cannot be asked.
     */
    public static String warning(final UdpTransport udp, final int lanes)
    {
        final InterfaceMtu mtu;
        try
        {
            mtu = InterfaceMtu.of(ControllerClient.sourceToward(udp.localAddress(), udp.peerAddress(0)));
        }
        catch (final RuntimeException ex)
        {
            return null; // no route to ask about: the join itself worked, so say nothing
        }
        final int bytes = InaggHeader.HEADERS_IN_MTU + lanes * Integer.BYTES;
        if (bytes <= mtu.bytes())
        {
            return null;
        }
        final int fitting = (mtu.bytes() - InaggHeader.HEADERS_IN_MTU) / Integer.BYTES;
        final String what = String.format(Locale.ROOT, "the switch's packets (%d lanes: %,d bytes with IPv4 and UDP) "
            + "exceed the %,d-byte MTU of %s: the kernel fragments every one (slower; a lost fragment loses the packet)",
            lanes, bytes, mtu.bytes(), mtu.where());
        if (fitting < 1)
        {
            return what + "; no lane fits that MTU after the headers";
        }
        return what + String.format(Locale.ROOT, "; packets of %d lanes fit: the controller's --lanes %d, or the "
            + "switch's --job ID:WORKERS:SLOTS:%d", fitting, Math.min(fitting, SwitchJobConfig.MTU_FILLING_MAX_LANES),
            fitting);
    }
}
