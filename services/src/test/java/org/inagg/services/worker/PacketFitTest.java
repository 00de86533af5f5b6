package org.inagg.services.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;

import org.inagg.transport.InterfaceMtu;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;

/** A job's packets against the MTU of the worker's own interface toward the switch (here loopback's). */
class PacketFitTest
{
    @Test
    void shouldWarnOnlyWhenThePacketsExceedTheInterfacesMtuAndNameTheLanesThatFit()
    {
        final InterfaceMtu lo = InterfaceMtu.of(InetAddress.getLoopbackAddress());
        final int fitting = (lo.bytes() - InaggHeader.HEADERS_IN_MTU) / Integer.BYTES;
        try (UdpTransport udp = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0),
            List.of(new InetSocketAddress("127.0.0.1", 9000)), 1, 64, 1))
        {
            assertThat(PacketFit.warning(udp, InaggHeader.MAX_ELEMENTS_FOR_1500_MTU)).isNull();
            assertThat(PacketFit.warning(udp, fitting)).as("exactly the MTU").isNull();
            assertThat(PacketFit.warning(udp, fitting + 1)).contains("(" + (fitting + 1) + " lanes: ")
                .contains(String.format(Locale.ROOT, "exceed the %,d-byte MTU of %s", lo.bytes(), lo.where()))
                .contains("packets of " + fitting + " lanes fit")
                .contains("the controller's --lanes " + InaggHeader.MAX_ELEMENTS_FOR_1500_MTU)
                .endsWith("--job ID:WORKERS:SLOTS:" + fitting);
        }
        // Bound to the wildcard: the interface is the one the kernel routes toward the switch (loopback here).
        try (UdpTransport any = UdpTransport.open(new InetSocketAddress("0.0.0.0", 0),
            List.of(new InetSocketAddress("127.0.0.1", 9000)), 1, 64, 1))
        {
            assertThat(PacketFit.warning(any, fitting)).isNull();
            assertThat(PacketFit.warning(any, fitting + 1)).contains("MTU of " + lo.where());
        }
    }
}
