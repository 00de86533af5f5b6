package org.inagg.transport;

import java.net.Inet4Address;
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
    void shouldGiveForTheWildcardAnUpInterfacesMtuNoLargerThanAnyOtherThatCarriesIpv4() throws Exception
    {
        final InterfaceMtu mtu = InterfaceMtu.of(InetAddress.getByName("0.0.0.0"));
        final NetworkInterface chosen = NetworkInterface.getByName(mtu.where());
        assertThat(chosen).as("the interface named: %s", mtu).isNotNull();
        assertThat(chosen.isUp()).isTrue();
        assertThat(chosen.getMTU()).isEqualTo(mtu.bytes());
        for (final NetworkInterface other : NetworkInterface.networkInterfaces().toList())
        {
            if (other.isUp() && !other.isLoopback() && other.inetAddresses().anyMatch(a -> a instanceof Inet4Address))
            {
                assertThat(chosen.isLoopback()).as("loopback chosen although %s is up", other.getName()).isFalse();
                assertThat(mtu.bytes()).as("MTU of %s", other.getName()).isLessThanOrEqualTo(other.getMTU());
            }
        }
    }
}
