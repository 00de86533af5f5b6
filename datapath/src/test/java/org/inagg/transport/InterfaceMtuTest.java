package org.inagg.transport;

import java.net.InetAddress;
import java.net.NetworkInterface;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class InterfaceMtuTest
{
    @Test
    void shouldGiveTheMtuOfTheInterfaceHoldingTheAddress() throws Exception
    {
        final InetAddress loopback = InetAddress.getByName("127.0.0.1");
        final NetworkInterface lo = NetworkInterface.getByInetAddress(loopback);
        final InterfaceMtu mtu = InterfaceMtu.of(loopback);
        assertThat(mtu.bytes()).isEqualTo(lo.getMTU());
        assertThat(mtu.where()).isEqualTo(lo.getName());
    }

    @Test
    void shouldGiveEthernetsMtuForAnAddressNoInterfaceHolds() throws Exception
    {
        // TEST-NET-1 (RFC 5737): never assigned to a host.
        final InterfaceMtu mtu = InterfaceMtu.of(InetAddress.getByName("192.0.2.77"));
        assertThat(mtu.bytes()).isEqualTo(InterfaceMtu.ETHERNET);
        assertThat(mtu.where()).isEqualTo("no interface holds 192.0.2.77");
    }

    @Test
    void shouldGiveTheSmallestMtuOfTheUpInterfacesForTheWildcard() throws Exception
    {
        int smallest = Integer.MAX_VALUE;
        int loopback = 0;
        for (final NetworkInterface candidate : NetworkInterface.networkInterfaces().toList())
        {
            if (candidate.isUp() && candidate.getMTU() > 0)
            {
                if (candidate.isLoopback())
                {
                    loopback = candidate.getMTU();
                }
                else
                {
                    smallest = Math.min(smallest, candidate.getMTU());
                }
            }
        }
        final int expected = smallest != Integer.MAX_VALUE ? smallest : loopback > 0 ? loopback : InterfaceMtu.ETHERNET;
        assertThat(InterfaceMtu.of(InetAddress.getByName("0.0.0.0")).bytes()).isEqualTo(expected);
    }
}
