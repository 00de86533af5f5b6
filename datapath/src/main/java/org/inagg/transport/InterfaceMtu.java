package org.inagg.transport;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Enumeration;

/**
 * The MTU of the link a socket bound to an address sends on, as the kernel reports it: the interface that holds the
 * address; for the wildcard (0.0.0.0) the smallest MTU of the interfaces that are up and hold an IPv4 address (what a
 * UDP socket of inagg's sends on), loopback left out unless it is the only one (a packet sized for the smallest crosses
 * any of them unfragmented); {@link #ETHERNET} where no interface answers. A socket bound to loopback gets loopback's
 * MTU (65,536 on Linux).
 *
 * @param bytes the MTU, IPv4 and UDP headers included.
 * @param where the interface it is from, or why it is the default.
 */
public record InterfaceMtu(int bytes, String where)
{
    /** Standard Ethernet's MTU: the answer where the interfaces cannot be asked. */
    public static final int ETHERNET = 1500;

    /** The MTU for a socket bound to {@code address}; never throws. */
    public static InterfaceMtu of(final InetAddress address)
    {
        try
        {
            if (!address.isAnyLocalAddress())
            {
                final NetworkInterface holder = NetworkInterface.getByInetAddress(address);
                if (holder != null && holder.getMTU() > 0)
                {
                    return new InterfaceMtu(holder.getMTU(), holder.getName());
                }
                if (address.isLoopbackAddress())
                {
                    return smallest(true);
                }
                return new InterfaceMtu(ETHERNET, "no interface holds " + address.getHostAddress());
            }
            return smallest(false);
        }
        catch (final SocketException ex)
        {
            return new InterfaceMtu(ETHERNET, "interfaces unreadable: " + ex.getMessage());
        }
    }

    private static InterfaceMtu smallest(final boolean loopbackOnly) throws SocketException
    {
        NetworkInterface best = null;
        NetworkInterface loopback = null;
        final Enumeration<NetworkInterface> all = NetworkInterface.getNetworkInterfaces();
        while (all != null && all.hasMoreElements())
        {
            final NetworkInterface candidate = all.nextElement();
            if (!candidate.isUp() || candidate.getMTU() <= 0
                || candidate.inetAddresses().noneMatch(a -> a instanceof Inet4Address))
            {
                continue;
            }
            if (candidate.isLoopback())
            {
                loopback = candidate;
            }
            else if (!loopbackOnly && (best == null || candidate.getMTU() < best.getMTU()))
            {
                best = candidate;
            }
        }
        final NetworkInterface chosen = best != null ? best : loopback;
        return chosen == null ? new InterfaceMtu(ETHERNET, "no interface is up")
            : new InterfaceMtu(chosen.getMTU(), chosen.getName());
    }
}
