package org.inagg.transport;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

import org.agrona.collections.IntArrayList;
import org.agrona.collections.Long2LongHashMap;

/**
 * The peers of a transport, by source address: an IPv4 address and UDP port, as one {@link #key(int, int) key}, to a
 * peer number (an index into the transport's own per-peer arrays). Both the UDP and the DPDK transport number their
 * peers with one of these, so a source is a peer, a stranger or refused by the same rule:
 * <ul>
 *   <li><b>Registered</b> peers ({@link #register}: given when the transport opens, or added later, e.g. a job's
 *       sources) take the next number, in the order registered; registering a source again gives its number, and
 *       pins it if it had been learned.</li>
 *   <li><b>Learned</b> peers: a message from a source not in the table makes it the next peer ({@link #learn}), while
 *       learned peers are fewer than {@code maxLearned} and the table holds fewer than {@code maxPeers}; beyond that
 *       the message is handed up from peer {@link #NO_PEER}. A node that registers its peers at run time keeps
 *       {@code maxPeers - maxLearned} numbers for them, whatever a flood from many source ports does.</li>
 *   <li><b>Removed</b> peers ({@link #remove}) free their number; the next peer registered or learned takes the number
 *       freed last. Nothing else ever forgets a peer.</li>
 *   <li><b>Source port 0</b> is never a peer (RFC 768: "no port", nothing can answer it): {@link #register} refuses it,
 *       {@link #find} and {@link #learn} answer {@link #NO_PORT}, and the transports drop such messages and count
 *       them, rather than handing them up from a peer no reply can reach.</li>
 * </ul>
 * {@link #find} allocates nothing; registering and learning allocate only when the table grows. Not thread safe: the
 * transport's polling thread owns it.
 */
public final class PeerTable
{
    /** No peer: a stranger beyond the table. */
    public static final int NO_PEER = -1;
    /** A source with UDP port 0, which is never a peer. */
    public static final int NO_PORT = -2;

    private static final long NO_KEY = -1;

    private final int maxPeers;
    private final int maxLearned;
    private final Long2LongHashMap peerByKey = new Long2LongHashMap(NO_PEER);
    private final IntArrayList freeNumbers = new IntArrayList();
    private long[] keys = new long[0];
    private boolean[] learned = new boolean[0];
    private int numbers;
    private int learnedCount;

    /**
     * @param maxPeers   most peers at once, learned ones included.
     * @param maxLearned most peers learned from strangers' messages (0..maxPeers).
     */
    public PeerTable(final int maxPeers, final int maxLearned)
    {
        if (maxPeers < 0 || maxLearned < 0 || maxLearned > maxPeers)
        {
            throw new IllegalArgumentException("learned peers must be in 0.." + maxPeers + ", got " + maxLearned);
        }
        this.maxPeers = maxPeers;
        this.maxLearned = maxLearned;
    }

    /** The key of an IPv4 address (most significant byte first) and UDP port: {@code ip << 16 | port}, unsigned. */
    public static long key(final int ip, final int port)
    {
        return Integer.toUnsignedLong(ip) << 16 | (port & 0xFFFF);
    }

    /**
     * The key of an IPv4 socket address.
     *
     * @throws IllegalArgumentException for an address that is not IPv4 (or not resolved).
     */
    public static long keyOf(final InetSocketAddress address)
    {
        if (!(address.getAddress() instanceof Inet4Address v4))
        {
            throw new IllegalArgumentException("peers are IPv4 addresses, got " + address);
        }
        final byte[] b = v4.getAddress();
        return key((b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | b[3] & 0xFF, address.getPort());
    }

    /** The socket address of a key. */
    public static InetSocketAddress addressOf(final long key)
    {
        final int ip = ipOf(key);
        try
        {
            return new InetSocketAddress(InetAddress.getByAddress(
                new byte[] {(byte)(ip >>> 24), (byte)(ip >>> 16), (byte)(ip >>> 8), (byte)ip}), portOf(key));
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /** The IPv4 address of a key. */
    public static int ipOf(final long key)
    {
        return (int)(key >>> 16);
    }

    /** The UDP port of a key. */
    public static int portOf(final long key)
    {
        return (int)(key & 0xFFFF);
    }

    /** The number of the peer with {@code key}, {@link #NO_PEER} when there is none, {@link #NO_PORT} for port 0. */
    public int find(final long key)
    {
        final int peer = (int)peerByKey.get(key);
        return peer == NO_PEER && portOf(key) == 0 ? NO_PORT : peer;
    }

    /**
     * Registers {@code key} (or finds it, and pins it if it was learned).
     *
     * @return its number, or {@link #NO_PEER} when the table is full.
     * @throws IllegalArgumentException for port 0.
     */
    public int register(final long key)
    {
        if (portOf(key) == 0)
        {
            throw new IllegalArgumentException("UDP port 0 cannot be a peer's port: " + describe(key));
        }
        final int known = (int)peerByKey.get(key);
        if (known >= 0)
        {
            if (learned[known])
            {
                learned[known] = false;
                learnedCount--;
            }
            return known;
        }
        return insert(key);
    }

    /**
     * Learns the source {@code key} of a message (call after {@link #find} found nothing).
     *
     * @return its new number, {@link #NO_PEER} when learned peers fill their share or the table is full, or
     *         {@link #NO_PORT} for port 0.
     */
    public int learn(final long key)
    {
        if (portOf(key) == 0)
        {
            return NO_PORT;
        }
        if (learnedCount >= maxLearned)
        {
            return NO_PEER;
        }
        final int peer = insert(key);
        if (peer >= 0)
        {
            learned[peer] = true;
            learnedCount++;
        }
        return peer;
    }

    /**
     * Forgets peer {@code peer}: its source is a stranger's again and its number goes to the next peer added.
     *
     * @return whether there was such a peer.
     */
    public boolean remove(final int peer)
    {
        if (!contains(peer))
        {
            return false;
        }
        peerByKey.remove(keys[peer]);
        keys[peer] = NO_KEY;
        if (learned[peer])
        {
            learned[peer] = false;
            learnedCount--;
        }
        freeNumbers.addInt(peer);
        return true;
    }

    /** Whether {@code peer} is a peer now (not removed, not beyond the numbers given out). */
    public boolean contains(final int peer)
    {
        return peer >= 0 && peer < numbers && keys[peer] != NO_KEY;
    }

    /** The key of peer {@code peer}, or -1 when there is no such peer. */
    public long keyOf(final int peer)
    {
        return peer >= 0 && peer < numbers ? keys[peer] : NO_KEY;
    }

    /** Numbers given out so far (removed ones included): every peer is below it. */
    public int numbers()
    {
        return numbers;
    }

    /** Peers now in the table. */
    public int size()
    {
        return numbers - freeNumbers.size();
    }

    /** Peers now in the table that were learned and not registered since. */
    public int learnedCount()
    {
        return learnedCount;
    }

    /** {@code a.b.c.d:port} of a key. */
    public static String describe(final long key)
    {
        final int ip = ipOf(key);
        return (ip >>> 24) + "." + (ip >>> 16 & 0xFF) + "." + (ip >>> 8 & 0xFF) + "." + (ip & 0xFF) + ":" + portOf(key);
    }

    private int insert(final long key)
    {
        final int peer;
        if (!freeNumbers.isEmpty())
        {
            peer = freeNumbers.removeAt(freeNumbers.size() - 1);
        }
        else if (numbers < maxPeers)
        {
            peer = numbers++;
            if (peer == keys.length)
            {
                final int size = Math.min(maxPeers, Math.max(8, keys.length * 2));
                keys = Arrays.copyOf(keys, size);
                learned = Arrays.copyOf(learned, size);
            }
        }
        else
        {
            return NO_PEER;
        }
        keys[peer] = key;
        peerByKey.put(key, peer);
        return peer;
    }
}
