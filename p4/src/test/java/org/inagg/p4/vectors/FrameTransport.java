package org.inagg.p4.vectors;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.inagg.p4.control.InaggP4;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;

/**
 * A transport that speaks the frames of the conformance vectors: an Ethernet / IPv4 / UDP frame on a switch port is
 * handed to the switch as its UDP payload from the peer of its (IPv4 source, UDP source port), the pair the P4
 * programs check; a message the switch sends to a peer leaves as a frame with that peer's addresses on its port,
 * written the way the P4 programs' egress writes them (IPv4 identification 0, DF, TTL 64, UDP source port
 * {@link InaggP4#UDP_PORT}, UDP checksum 0). A source the control plane did not register becomes a new peer whose
 * address is where it came from, as the P4 programs answer a JOIN to its sender.
 */
final class FrameTransport implements Transport
{
    static final int ETHERNET_LENGTH = 14;
    static final int IPV4_LENGTH = 20;
    static final int UDP_LENGTH = 8;
    static final int HEADERS_LENGTH = ETHERNET_LENGTH + IPV4_LENGTH + UDP_LENGTH;
    private static final int MAX_MESSAGE = 9000;

    /** Where a peer's frames go. */
    record PeerAddress(int port, long mac, int ipv4, int udpPort)
    {
    }

    record Frame(int port, byte[] bytes)
    {
    }

    private final SwitchAddress switchAddress;
    private final List<PeerAddress> peers = new ArrayList<>();
    private final Map<Long, Integer> peerBySource = new HashMap<>();
    private final byte[] tx = new byte[MAX_MESSAGE];
    private final MemorySegment txMemory = MemorySegment.ofArray(tx);
    private final List<Frame> sent = new ArrayList<>();
    private int claimedPeer = -1;
    private int claimedLength;

    FrameTransport(final SwitchAddress switchAddress)
    {
        this.switchAddress = switchAddress;
    }

    /**
     * The peer of a source: the registered one, or a new one answered where it came from. A source registered by
     * {@link #sourceOnly} learns its port and MAC here, from its first frame.
     */
    int peer(final int ipv4, final int udpPort, final int port, final long mac)
    {
        final long source = ((long)ipv4 << 16) | udpPort;
        final int peer = peerBySource.computeIfAbsent(source, s ->
        {
            peers.add(new PeerAddress(port, mac, ipv4, udpPort));
            return peers.size() - 1;
        });
        if (peers.get(peer).port() < 0 && port >= 0)
        {
            peers.set(peer, new PeerAddress(port, mac, ipv4, udpPort));
        }
        return peer;
    }

    /**
     * Registers a source the setup names only by IPv4 address and UDP port (an upstream job's local worker: no
     * endpoint or multicast node tells its port and MAC); replies go where its first frame came from.
     */
    int sourceOnly(final int ipv4, final int udpPort)
    {
        return peer(ipv4, udpPort, -1, 0);
    }

    /**
     * Hands the frame to {@code handler} as the switch's transport would: only IPv4 (no options, not a fragment) / UDP
     * to the inagg port, carrying one whole UDP datagram (UDP length at least 8, IPv4 total length = 20 + UDP length,
     * the frame at least that long; bytes after it are ignored); anything else is not a message for the switch and is
     * dropped here uncounted, as the P4 programs drop it (docs/p4.md, "Wire format and parser"). The message is the
     * UDP payload, whatever it holds: the switch's own check (InaggHeader.check) judges it.
     */
    boolean deliver(final int port, final byte[] frame, final MessageHandler handler)
    {
        final ByteBuffer b = ByteBuffer.wrap(frame);
        if (frame.length < HEADERS_LENGTH || b.getShort(12) != 0x0800 || b.get(14) != 0x45
            || (b.getShort(20) & 0x3FFF) != 0 || b.get(23) != 17
            || (b.getShort(36) & 0xFFFF) != InaggP4.UDP_PORT)
        {
            return false;
        }
        final int ipLength = b.getShort(16) & 0xFFFF;
        final int udpLength = b.getShort(38) & 0xFFFF;
        if (udpLength < UDP_LENGTH || ipLength != IPV4_LENGTH + udpLength
            || ETHERNET_LENGTH + IPV4_LENGTH + udpLength > frame.length)
        {
            return false;
        }
        final long mac = ((b.getInt(6) & 0xFFFF_FFFFL) << 16) | (b.getShort(10) & 0xFFFF);
        final int peer = peer(b.getInt(26), b.getShort(34) & 0xFFFF, port, mac);
        handler.onMessage(MemorySegment.ofArray(frame), HEADERS_LENGTH, udpLength - UDP_LENGTH, peer);
        return true;
    }

    /** Frames sent since the last call. */
    List<Frame> drainSent()
    {
        final List<Frame> frames = List.copyOf(sent);
        sent.clear();
        return frames;
    }

    @Override
    public int maxMessageLength()
    {
        return MAX_MESSAGE;
    }

    @Override
    public MemorySegment txMemory()
    {
        return txMemory;
    }

    @Override
    public long claim(final int peer, final int length)
    {
        if (peer < 0 || peer >= peers.size() || length > MAX_MESSAGE || claimedPeer >= 0)
        {
            return CLAIM_FAILED;
        }
        claimedPeer = peer;
        claimedLength = length;
        return 0;
    }

    @Override
    public void commit()
    {
        final PeerAddress to = peers.get(claimedPeer);
        final ByteBuffer f = ByteBuffer.allocate(HEADERS_LENGTH + claimedLength);
        f.putShort((short)(to.mac() >>> 32)).putInt((int)to.mac());
        f.putShort((short)(switchAddress.mac() >>> 32)).putInt((int)switchAddress.mac());
        f.putShort((short)0x0800);
        f.put((byte)0x45).put((byte)0).putShort((short)(IPV4_LENGTH + UDP_LENGTH + claimedLength));
        f.putShort((short)0).putShort((short)0x4000).put((byte)64).put((byte)17).putShort((short)0);
        f.putInt(switchAddress.ipv4()).putInt(to.ipv4());
        f.putShort(24, ipv4Checksum(f.array(), ETHERNET_LENGTH));
        f.putShort((short)InaggP4.UDP_PORT).putShort((short)to.udpPort());
        f.putShort((short)(UDP_LENGTH + claimedLength)).putShort((short)0);
        f.put(tx, 0, claimedLength);
        sent.add(new Frame(to.port(), f.array()));
        claimedPeer = -1;
    }

    static short ipv4Checksum(final byte[] frame, final int offset)
    {
        int sum = 0;
        for (int i = 0; i < IPV4_LENGTH; i += 2)
        {
            if (i != 10)
            {
                sum += ((frame[offset + i] & 0xFF) << 8) | (frame[offset + i + 1] & 0xFF);
            }
        }
        while ((sum >>> 16) != 0)
        {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (short)~sum;
    }

    @Override
    public void abort()
    {
        claimedPeer = -1;
    }

    @Override
    public int flush()
    {
        return 0;
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        return 0;
    }

    @Override
    public String describePeer(final int peer)
    {
        return peer >= 0 && peer < peers.size() ? peers.get(peer).toString() : "peer " + peer;
    }

    @Override
    public void close()
    {
    }
}
