package org.inagg.transport;

import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * The peers of a {@link UdpTransport}: numbered by a {@link PeerTable} (its rule: registered, learned within a share,
 * removed, never source port 0), each with its socket address, which its {@link DatagramIo} is told of when a peer is
 * added; and the sender of the datagram being handed up now. A datagram's sender is looked up by key
 * ({@code sendmmsg}/{@code recvmmsg}) or by the address the JDK handed up (whose key is computed only when that object
 * changes: the JDK hands up the same one while the sender does not change). Datagrams from source port 0 are counted
 * and dropped, those from strangers beyond the table counted; the transport's {@link #counters} live here, where its
 * {@link DatagramIo} counts too. Not thread safe: the transport's polling thread owns it.
 */
final class UdpPeers
{
    private final PeerTable table;
    private final DatagramIo io;
    private InetSocketAddress[] addresses = new InetSocketAddress[0];
    private InetSocketAddress sender;
    private InetSocketAddress lastSource;
    private long lastSourceKey;
    /** The transport's counters: what its I/O sends, loses and hands up, and the senders counted here. */
    TransportCounters counters = TransportCounters.inMemory();

    UdpPeers(final int maxPeers, final int maxLearned, final DatagramIo io)
    {
        this.table = new PeerTable(maxPeers, maxLearned);
        this.io = io;
    }

    /**
     * Registers {@code address} (or finds it, and pins it if it was learned).
     *
     * @return its number, or -1 when the table is full.
     * @throws IllegalArgumentException for an address that is not IPv4 or has port 0.
     */
    int add(final InetSocketAddress address)
    {
        final long key = keyOf(address);
        final int known = table.find(key);
        if (known >= 0)
        {
            table.register(key);
            return known;
        }
        final int peer = table.register(key);
        remember(peer, address);
        return peer;
    }

    /** Forgets peer {@code peer}; whether there was one. */
    boolean remove(final int peer)
    {
        if (!table.remove(peer))
        {
            return false;
        }
        addresses[peer] = null;
        return true;
    }

    /** The address of peer {@code peer}, or null when there is none. */
    InetSocketAddress address(final int peer)
    {
        return peer >= 0 && peer < table.numbers() ? addresses[peer] : null;
    }

    /** Numbers given out so far: every peer is below it. */
    int numbers()
    {
        return table.numbers();
    }

    /** The sender of the datagram being handed up now. */
    InetSocketAddress sender()
    {
        return sender;
    }

    /**
     * The peer of a datagram from {@code key} (learning it when new), {@link PeerTable#NO_PEER} (counted) beyond the
     * table, or {@link PeerTable#NO_PORT} (counted) for port 0; sets {@link #sender()}.
     */
    int onDatagramFrom(final long key)
    {
        final int peer = table.find(key);
        if (peer >= 0)
        {
            sender = addresses[peer];
            return peer;
        }
        return onStranger(key, null);
    }

    /** As {@link #onDatagramFrom(long)}, for the address the JDK handed up. */
    int onDatagramFrom(final InetSocketAddress source)
    {
        if (source != lastSource)
        {
            lastSourceKey = keyOf(source);
            lastSource = source;
        }
        final int peer = table.find(lastSourceKey);
        sender = source;
        return peer >= 0 ? peer : onStranger(lastSourceKey, source);
    }

    private int onStranger(final long key, final InetSocketAddress source)
    {
        if (PeerTable.portOf(key) == 0)
        {
            counters.increment(TransportCounter.DROP_SOURCE_PORT_ZERO);
            sender = source;
            return PeerTable.NO_PORT;
        }
        final InetSocketAddress address = source != null ? source : addressOf(key);
        sender = address;
        final int peer = table.learn(key);
        if (peer < 0)
        {
            counters.increment(TransportCounter.FROM_STRANGERS);
        }
        remember(peer, address);
        return peer;
    }

    private void remember(final int peer, final InetSocketAddress address)
    {
        if (peer < 0)
        {
            return;
        }
        if (peer >= addresses.length)
        {
            addresses = Arrays.copyOf(addresses, Math.max(peer + 1, Math.max(8, addresses.length * 2)));
        }
        addresses[peer] = address;
        io.peerAdded(peer, address);
    }

    /** The {@link PeerTable#key} of an IPv4 socket address. */
    static long keyOf(final InetSocketAddress address)
    {
        return PeerTable.keyOf(address);
    }

    /** The socket address of a key (for a sender seen for the first time). */
    static InetSocketAddress addressOf(final long key)
    {
        return PeerTable.addressOf(key);
    }
}
