package org.inagg.transport.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.inagg.ffi.dpdk.DpdkException;
import org.inagg.ffi.dpdk.EthPort;
import org.inagg.ffi.dpdk.FastPath;
import org.inagg.ffi.dpdk.Mbuf;
import org.inagg.transport.frame.UdpFrameCodec;

/**
 * The DPDK ports under a {@link DpdkTransport}'s links: found by name or id when the transport opens, then (unless
 * {@link DpdkTransportConfig#startPorts(boolean)} is off) configured with as many queues as the links use, started,
 * and at close drained, stopped and closed. Not on any per-packet path.
 */
public final class DpdkPorts
{
    private static final int DRAIN_LIMIT = 65_536;
    private static final System.Logger LOGGER = System.getLogger(DpdkPorts.class.getName());

    private final int[] linkPort;
    /** Per port id: {rx queues, tx queues} its links use. */
    private final Map<Integer, int[]> queuesByPort = new LinkedHashMap<>();
    private final List<EthPort> ownedPorts = new ArrayList<>();
    private final List<Integer> ownedPortRxQueues = new ArrayList<>();
    private final Map<Integer, Long> rssByPort = new LinkedHashMap<>();

    private DpdkPorts(final List<DpdkTransportConfig.Link> links)
    {
        linkPort = new int[links.size()];
        for (int l = 0; l < links.size(); l++)
        {
            final EthPort port = findPort(links.get(l).port());
            linkPort[l] = port.id();
            final int[] queues = queuesByPort.computeIfAbsent(port.id(), k -> new int[2]);
            queues[0] = Math.max(queues[0], links.get(l).rxQueue() + 1);
            queues[1] = Math.max(queues[1], links.get(l).txQueue() + 1);
        }
    }

    /**
     * Finds the port of each link of {@code config}, checking that the largest frame fits an mbuf of its pool.
     *
     * @throws DpdkException naming the port when one is missing.
     */
    static DpdkPorts find(final DpdkTransportConfig config)
    {
        requireFrameRoom(config);
        return new DpdkPorts(config.links());
    }

    /** The DPDK port id of each link. */
    int[] linkPorts()
    {
        return linkPort;
    }

    /**
     * Configures each port with as many queues as its links use (with more than one receive queue, asking for
     * UDP/IPv4 RSS unless {@link DpdkTransportConfig#rss(boolean)} is off), sets them up (receiving into the pool),
     * starts it and enables promiscuous mode where the device has it. Ports started are closed by {@link #close}.
     */
    void start(final DpdkTransportConfig config)
    {
        for (final Map.Entry<Integer, int[]> entry : queuesByPort.entrySet())
        {
            final EthPort port = EthPort.of(entry.getKey());
            ownedPorts.add(port);
            ownedPortRxQueues.add(entry.getValue()[0]);
            configure(port, entry.getValue()[0], entry.getValue()[1], config.rss());
            for (int q = 0; q < entry.getValue()[0]; q++)
            {
                port.setupRxQueue(q, config.descriptors(), config.pool());
            }
            for (int q = 0; q < entry.getValue()[1]; q++)
            {
                port.setupTxQueue(q, config.descriptors());
            }
            port.start();
            port.promiscuous();
        }
    }

    /** The RSS hash types in use on port {@code portId} when {@link #start} configured it with RSS; else 0. */
    long rssHashTypes(final int portId)
    {
        return rssByPort.getOrDefault(portId, 0L);
    }

    /**
     * Drains, stops and closes the ports {@link #start} started.
     *
     * @return the first failure, or null.
     */
    RuntimeException close(final MemorySegment mbufs, final int burst)
    {
        RuntimeException failure = null;
        for (int i = 0; i < ownedPorts.size(); i++)
        {
            final EthPort port = ownedPorts.get(i);
            try
            {
                if (port.isStarted())
                {
                    drain(port.id(), ownedPortRxQueues.get(i), mbufs, burst);
                }
                port.close();
            }
            catch (final RuntimeException ex)
            {
                failure = failure == null ? ex : failure;
            }
        }
        return failure;
    }

    /**
     * Receives and frees until receive queues {@code 0..rxQueues-1} of {@code portId} come back empty, or at most
     * 65 536 frames per queue (a device such as net_null never runs dry): mbufs still in a virtual device's rings
     * (net_ring) are not released when the port stops.
     */
    public static void drain(final int portId, final int rxQueues, final MemorySegment mbufs, final int burst)
    {
        for (int queue = 0; queue < rxQueues; queue++)
        {
            int drained = 0;
            int received = FastPath.rxBurst(portId, queue, mbufs, burst);
            while (received > 0)
            {
                FastPath.bulkFree(mbufs, received);
                drained += received;
                received = drained < DRAIN_LIMIT ? FastPath.rxBurst(portId, queue, mbufs, burst) : 0;
            }
        }
    }

    /**
     * Configures a port the transport owns: with more than one receive queue and {@code rss} on, asks for UDP/IPv4
     * receive-side scaling (applied where the device offers it) and logs what it got; otherwise the defaults.
     */
    private void configure(final EthPort port, final int rxQueues, final int txQueues, final boolean rss)
    {
        if (rxQueues > 1 && rss)
        {
            final long applied = port.configureRss(rxQueues, txQueues, EthPort.RSS_IPV4_UDP);
            rssByPort.put(port.id(), applied);
            if (applied != 0)
            {
                LOGGER.log(System.Logger.Level.INFO, "DPDK port {0}: RSS over {1} rx queues, hash types 0x{2}",
                    port.id(), rxQueues, Long.toHexString(applied));
            }
            else
            {
                LOGGER.log(System.Logger.Level.INFO, "DPDK port {0}: {1} rx queues without RSS (the device offers no"
                    + " UDP/IPv4 hashing): steer frames to queues by other means", port.id(), rxQueues);
            }
        }
        else
        {
            port.configure(rxQueues, txQueues);
            if (rxQueues > 1)
            {
                LOGGER.log(System.Logger.Level.INFO, "DPDK port {0}: {1} rx queues, RSS turned off", port.id(),
                    rxQueues);
            }
        }
    }

    /** Frames are single-segment: the largest one must fit an mbuf of the pool after the default headroom. */
    private static void requireFrameRoom(final DpdkTransportConfig config)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment one = arena.allocate(ValueLayout.ADDRESS);
            if (!FastPath.rawBulkAlloc(config.pool().address(), one, 1))
            {
                throw new IllegalArgumentException("the pool " + config.pool().name() + " has no free mbuf");
            }
            final long mbuf = Mbuf.at(one, 0);
            Mbuf.prepareRaw(mbuf, 0);
            final int room = Mbuf.tailroom(mbuf);
            FastPath.bulkFree(one, 1);
            if (UdpFrameCodec.HEADERS_LENGTH + config.maxMessageLength() > room)
            {
                throw new IllegalArgumentException("maxMessageLength " + config.maxMessageLength() + " plus "
                    + UdpFrameCodec.HEADERS_LENGTH + " bytes of headers does not fit the " + room + " bytes of an mbuf of pool "
                    + config.pool().name());
            }
        }
    }

    private static EthPort findPort(final String nameOrId)
    {
        try
        {
            if (nameOrId.chars().allMatch(Character::isDigit))
            {
                final int id = Integer.parseInt(nameOrId);
                if (id >= EthPort.availableCount())
                {
                    throw new DpdkException("no DPDK port " + id + "; " + describePorts(), 19);
                }
                return EthPort.of(id);
            }
            return EthPort.byName(nameOrId);
        }
        catch (final DpdkException ex)
        {
            throw new DpdkException("cannot find DPDK port '" + nameOrId + "': " + ex.getMessage() + "; "
                + describePorts() + " (give a device with --vdev or a PCI address with -a in the EAL arguments)",
                ex.errno());
        }
    }

    private static String describePorts()
    {
        final int count = EthPort.availableCount();
        final List<String> names = new ArrayList<>();
        for (int id = 0; id < count; id++)
        {
            try
            {
                names.add(id + "=" + EthPort.of(id).name());
            }
            catch (final DpdkException ex)
            {
                names.add(id + "=?");
            }
        }
        return count + " port(s) available " + names;
    }
}
