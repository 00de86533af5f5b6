package org.inagg.services.worker;

import org.inagg.services.controller.ControllerClient;
import org.inagg.transport.InterfaceMtu;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;

/**
 * Whether a job's packets fit the MTU of the interface a worker (or a host's agent) sends on toward its switch. A
 * switch, and a controller that asks it, size packets by the switch's own interface; a worker behind a smaller MTU (an
 * overlay's 1450 bytes) would have the kernel fragment every packet, which works but is slower, and one lost fragment
 * loses the packet. Checked once, at join.
 */
public final class PacketFit
{
    private PacketFit()
    {
    }

    /**
     * @param udp   the worker's socket; its peer 0 is the switch.
     * @param lanes the job's lanes per packet (from the switch's JOIN_ACK).
     * @return a warning naming the sizes, the interface and the {@code --lanes} that would fit; null when they fit.
     */
    public static String warning(final UdpTransport udp, final int lanes)
    {
        final InterfaceMtu mtu = InterfaceMtu.of(ControllerClient.sourceToward(udp.localAddress(),
            udp.peerAddress(0)));
        final int bytes = InaggHeader.HEADERS_IN_MTU + lanes * Integer.BYTES;
        if (bytes <= mtu.bytes())
        {
            return null;
        }
        return String.format("warning: the switch's packets (%d lanes: %,d bytes with IPv4 and UDP) exceed the %,d-byte "
            + "MTU of %s: the kernel fragments every one (slower; a lost fragment loses the packet); give the switch's "
            + "--job or the controller --lanes %d", lanes, bytes, mtu.bytes(), mtu.where(),
            Math.max(1, (mtu.bytes() - InaggHeader.HEADERS_IN_MTU) / Integer.BYTES));
    }
}
