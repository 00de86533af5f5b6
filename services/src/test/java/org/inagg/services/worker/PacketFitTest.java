package org.inagg.services.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.List;

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
        final InterfaceMtu lo = InterfaceMtu.of(java.net.InetAddress.getLoopbackAddress());
        final int fitting = (lo.bytes() - InaggHeader.HEADERS_IN_MTU) / Integer.BYTES;
        try (UdpTransport udp = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0),
            List.of(new InetSocketAddress("127.0.0.1", 9000)), 1, 64, 1))
        {
            assertThat(PacketFit.warning(udp, InaggHeader.MAX_ELEMENTS_FOR_1500_MTU)).isNull();
            assertThat(PacketFit.warning(udp, fitting)).as("exactly the MTU").isNull();
            assertThat(PacketFit.warning(udp, fitting + 1)).contains("(" + (fitting + 1) + " lanes: ")
                .contains(String.format("exceed the %,d-byte MTU of %s", lo.bytes(), lo.where()))
                .endsWith("--lanes " + fitting);
        }
    }
}
