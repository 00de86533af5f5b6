package org.inagg.services;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;

/** UDP ports on loopback for the node tests: one free to bind a node to, and the check that a node let one go. */
public final class LoopbackPorts
{
    /** Loopback, any port. */
    public static final InetSocketAddress LOOPBACK_ANY = new InetSocketAddress("127.0.0.1", 0);

    private LoopbackPorts()
    {
    }

    /** A loopback UDP port that was free a moment ago. */
    public static InetSocketAddress free() throws IOException
    {
        try (DatagramSocket probe = new DatagramSocket(LOOPBACK_ANY))
        {
            return (InetSocketAddress)probe.getLocalSocketAddress();
        }
    }

    /** Fails unless {@code port} can be bound again (the node that held it, closed or failed to launch, freed it). */
    public static void assertFree(final InetSocketAddress port, final String why) throws IOException
    {
        try (DatagramSocket again = new DatagramSocket(port))
        {
            assertThat(again.getLocalPort()).as(why).isEqualTo(port.getPort());
        }
    }
}
