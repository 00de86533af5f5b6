package org.inagg.transport.capture;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.util.Arrays;
import java.util.function.IntFunction;
import java.util.function.Supplier;

import org.inagg.transport.UdpTransport;
import org.inagg.transport.frame.UdpFrameCodec;

/**
 * Ethernet / IPv4 / UDP headers built for transports that carry bare messages (UDP sockets, in-process rings), 42 bytes
 * in front of each message, written by {@link UdpFrameCodec#write} (which draws them).
 * <p>
 * A sent message goes from this node to the peer, a received one from the peer to this node. The UDP checksum is 0
 * ("none", allowed over IPv4); the IPv4 header checksum is computed for each frame. MACs are not known to a socket:
 * they are synthesized as locally administered {@code 02:00:a:b:c:d} for IPv4 address a.b.c.d ({@link #macOf(int)}).
 * <p>
 * <b>UDP</b> ({@link #forUdp(UdpTransport)}): the socket's address and port, and each peer's (given or learned). A
 * socket bound to the wildcard address is shown with the local address the kernel routes to that peer from (looked
 * up once per peer, without sending anything). A sender beyond the transport's peer table (peer -1) is shown with
 * its real source address ({@link UdpTransport#currentSender()}) and, on a wildcard socket, the local address last
 * resolved for a known peer.
 * <p>
 * <b>In-process</b> ({@link #forInProcess(int)}): endpoint {@code e} of an
 * {@link org.inagg.transport.InProcessNetwork} is IPv4 {@code 10.0.0.0 + e + 1} ({@link #inProcessIpv4(int)}: endpoint
 * 0 is 10.0.0.1, endpoint 1 is 10.0.0.2, endpoint 255 is 10.0.1.0), MAC {@code 02:00:0a:..} of that address, UDP port
 * {@link #IN_PROCESS_UDP_PORT} (47000, the inagg port) on every endpoint. In {@code LocalCluster} the switch is
 * endpoint 0 and worker w is endpoint w + 1, so worker w is 10.0.0.(w + 2).
 * <p>
 * Addresses are resolved once per peer, when it is first seen (the only allocation); a frame costs a 42-byte write and
 * a checksum over ten 16-bit words.
 */
public final class SyntheticFrameHeaders implements FrameHeaders
{
    /** UDP port of every in-process endpoint in captures: the inagg port (InaggP4.UDP_PORT). */
    public static final int IN_PROCESS_UDP_PORT = 47000;
    /** Bytes of headers: Ethernet 14, IPv4 20, UDP 8. */
    public static final int LENGTH = UdpFrameCodec.HEADERS_LENGTH;

    private static final int IN_PROCESS_NET = 0x0A00_0000;
    private static final long MAC_PREFIX = 0x0200_0000_0000L;

    private final IntFunction<InetSocketAddress> peerAddress;
    private final IntFunction<InetSocketAddress> localAddressToPeer;
    private final Supplier<InetSocketAddress> unknownSender;
    private int[] peerIp = new int[0];
    private int[] peerPort = new int[0];
    private int[] localIp = new int[0];
    private int[] localPort = new int[0];
    private boolean[] resolved = new boolean[0];
    private int unknownLocalIp;
    private final int unknownLocalPort;
    private final boolean localIpVaries;
    private InetSocketAddress lastUnknown;
    private int lastUnknownIp;
    private int lastUnknownPort;

    /**
     * @param peerAddress        the address of a peer number, or null while it has none (looked up again later).
     * @param localAddressToPeer this node's address as seen by that peer, given the peer's number (-1: unknown peer).
     * @param unknownSender      the sender of a message from peer -1 (being received now), or null when unknown.
     */
    SyntheticFrameHeaders(
        final IntFunction<InetSocketAddress> peerAddress, final IntFunction<InetSocketAddress> localAddressToPeer,
        final Supplier<InetSocketAddress> unknownSender)
    {
        this.peerAddress = peerAddress;
        this.localAddressToPeer = localAddressToPeer;
        this.unknownSender = unknownSender;
        final InetSocketAddress local = localAddressToPeer.apply(-1);
        unknownLocalIp = ipv4(local);
        unknownLocalPort = local == null ? 0 : local.getPort();
        localIpVaries = unknownLocalIp == 0;
    }

    static SyntheticFrameHeaders forUdp(final UdpTransport transport)
    {
        final InetSocketAddress bound = transport.localAddress();
        return new SyntheticFrameHeaders(transport::peerAddress, peer ->
        {
            if (peer < 0 || !bound.getAddress().isAnyLocalAddress())
            {
                return bound;
            }
            final InetSocketAddress remote = transport.peerAddress(peer);
            return remote == null ? bound : new InetSocketAddress(routedFrom(remote), bound.getPort());
        }, transport::currentSender);
    }

    static SyntheticFrameHeaders forInProcess(final int endpoint)
    {
        return new SyntheticFrameHeaders(
            peer -> new InetSocketAddress(toInetAddress(inProcessIpv4(peer)), IN_PROCESS_UDP_PORT),
            peer -> new InetSocketAddress(toInetAddress(inProcessIpv4(endpoint)), IN_PROCESS_UDP_PORT), () -> null);
    }

    /** The IPv4 address (most significant byte first) of in-process endpoint {@code endpoint}: 10.0.0.0 + e + 1. */
    public static int inProcessIpv4(final int endpoint)
    {
        return IN_PROCESS_NET + endpoint + 1;
    }

    /** The synthesized MAC of IPv4 address {@code ipv4}: 02:00 followed by the address's four bytes. */
    public static long macOf(final int ipv4)
    {
        return MAC_PREFIX | (ipv4 & 0xFFFF_FFFFL);
    }

    /** The local address the kernel would send to {@code remote} from; the wildcard address when it cannot tell. */
    private static InetAddress routedFrom(final InetSocketAddress remote)
    {
        try (DatagramChannel probe = DatagramChannel.open(StandardProtocolFamily.INET))
        {
            probe.connect(remote);
            return ((InetSocketAddress)probe.getLocalAddress()).getAddress();
        }
        catch (final IOException | RuntimeException ex)
        {
            return remote.getAddress().isLoopbackAddress() ? InetAddress.getLoopbackAddress()
                : toInetAddress(0);
        }
    }

    private static InetAddress toInetAddress(final int ipv4)
    {
        try
        {
            return InetAddress.getByAddress(new byte[] {
                (byte)(ipv4 >>> 24), (byte)(ipv4 >>> 16), (byte)(ipv4 >>> 8), (byte)ipv4});
        }
        catch (final java.net.UnknownHostException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    private static int ipv4(final InetSocketAddress address)
    {
        if (address == null || !(address.getAddress() instanceof Inet4Address v4))
        {
            return 0;
        }
        final byte[] b = v4.getAddress();
        return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | b[3] & 0xFF;
    }

    @Override
    public int length(
        final MemorySegment memory, final long offset, final int length, final int peer, final boolean outbound)
    {
        return LENGTH;
    }

    @Override
    public void write(
        final MemorySegment memory, final long offset, final int length, final int peer, final boolean outbound,
        final MemorySegment destination, final long at, final int headersLength)
    {
        final int remoteIp;
        final int remotePort;
        final int myIp;
        final int myPort;
        if (peer < 0 || !resolve(peer))
        {
            final InetSocketAddress sender = outbound ? null : unknownSender.get();
            if (sender != lastUnknown)
            {
                lastUnknown = sender;
                lastUnknownIp = ipv4(sender);
                lastUnknownPort = sender == null ? 0 : sender.getPort();
            }
            remoteIp = sender == null ? 0 : lastUnknownIp;
            remotePort = sender == null ? 0 : lastUnknownPort;
            myIp = unknownLocalIp;
            myPort = unknownLocalPort;
        }
        else
        {
            remoteIp = peerIp[peer];
            remotePort = peerPort[peer];
            myIp = localIp[peer];
            myPort = localPort[peer];
        }
        final int srcIp = outbound ? myIp : remoteIp;
        final int dstIp = outbound ? remoteIp : myIp;
        UdpFrameCodec.write(destination, at, macOf(srcIp), srcIp, outbound ? myPort : remotePort, macOf(dstIp), dstIp,
            outbound ? remotePort : myPort, length);
    }

    /** Looks a peer's addresses up the first time it is seen; false while the transport has no address for it. */
    private boolean resolve(final int peer)
    {
        if (peer < resolved.length && resolved[peer])
        {
            return true;
        }
        final InetSocketAddress remote = peerAddress.apply(peer);
        if (remote == null)
        {
            return false;
        }
        if (peer >= resolved.length)
        {
            final int size = Math.max(peer + 1, resolved.length * 2);
            peerIp = Arrays.copyOf(peerIp, size);
            peerPort = Arrays.copyOf(peerPort, size);
            localIp = Arrays.copyOf(localIp, size);
            localPort = Arrays.copyOf(localPort, size);
            resolved = Arrays.copyOf(resolved, size);
        }
        final InetSocketAddress local = localAddressToPeer.apply(peer);
        peerIp[peer] = ipv4(remote);
        peerPort[peer] = remote.getPort();
        localIp[peer] = ipv4(local);
        localPort[peer] = local == null ? 0 : local.getPort();
        resolved[peer] = true;
        if (localIpVaries)
        {
            unknownLocalIp = localIp[peer];
        }
        return true;
    }
}
