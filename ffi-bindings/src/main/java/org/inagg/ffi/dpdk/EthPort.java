package org.inagg.ffi.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.inagg.ffi.dpdk.extr.dpdk_h;
import org.inagg.ffi.dpdk.extr.inagg_dpdk_shim_h;

/**
 * An ethdev port: configure, queue setup, start, stop, close, statistics and link status, plus the burst calls of
 * {@link FastPath} bound to this port.
 *
 * <p>Life cycle: {@link #configure} → {@link #setupRxQueue}/{@link #setupTxQueue} for every queue → {@link #start}
 * → bursts → {@link #stop} → {@link #close}. Configuration uses DPDK's defaults (a zeroed {@code rte_eth_conf},
 * default queue configurations): no offloads, and no RSS unless asked for with {@link #configureRss}.
 */
public final class EthPort implements AutoCloseable
{
    /** {@code RTE_ETH_NAME_MAX_LEN}. */
    private static final int NAME_MAX_LEN = 64;
    private static final int STATS_COUNT = 8;
    private static final int LINK_COUNT = 4;

    /** {@code RTE_ETH_RSS_IPV4} (DPDK 22.11 {@code rte_ethdev.h}: bit 2). */
    public static final long RSS_IPV4 = 1L << 2;
    /** {@code RTE_ETH_RSS_NONFRAG_IPV4_UDP} (DPDK 22.11 {@code rte_ethdev.h}: bit 5). */
    public static final long RSS_NONFRAG_IPV4_UDP = 1L << 5;
    /** Hash UDP/IPv4 frames by their 4-tuple (other IPv4 by addresses): what spreads inagg traffic over queues. */
    public static final long RSS_IPV4_UDP = RSS_IPV4 | RSS_NONFRAG_IPV4_UDP;

    private final int portId;
    private boolean started;
    private boolean closed;

    private EthPort(final int portId)
    {
        this.portId = portId;
    }

    /** The port with this id. */
    public static EthPort of(final int portId)
    {
        if (portId < 0 || portId > 0xFFFF)
        {
            throw new IllegalArgumentException("port id out of range: " + portId);
        }
        return new EthPort(portId);
    }

    /** The port of a device by its name, e.g. {@code net_ring0}. */
    public static EthPort byName(final String name)
    {
        NativeLibraryLoader.load();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment id = arena.allocate(ValueLayout.JAVA_SHORT);
            DpdkException.check(
                dpdk_h.rte_eth_dev_get_port_by_name(arena.allocateFrom(name), id),
                "rte_eth_dev_get_port_by_name(" + name + ")");
            return new EthPort(Short.toUnsignedInt(id.get(ValueLayout.JAVA_SHORT, 0)));
        }
    }

    /** {@code rte_eth_dev_count_avail}. */
    public static int availableCount()
    {
        NativeLibraryLoader.load();
        return Short.toUnsignedInt(dpdk_h.rte_eth_dev_count_avail());
    }

    public int id()
    {
        return portId;
    }

    /** {@code rte_eth_dev_get_name_by_port}. */
    public String name()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buf = arena.allocate(NAME_MAX_LEN);
            DpdkException.check(dpdk_h.rte_eth_dev_get_name_by_port((short)portId, buf), "rte_eth_dev_get_name_by_port");
            return buf.getString(0);
        }
    }

    /** {@code rte_eth_dev_socket_id}: NUMA socket, or {@link Dpdk#SOCKET_ID_ANY} for virtual devices. */
    public int socketId()
    {
        return dpdk_h.rte_eth_dev_socket_id((short)portId);
    }

    /** {@code rte_eth_dev_configure} with the default configuration. */
    public EthPort configure(final int rxQueues, final int txQueues)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment conf = arena.allocate(inagg_dpdk_shim_h.inagg_eth_conf_size(), 64);
            DpdkException.check(
                dpdk_h.rte_eth_dev_configure((short)portId, (short)rxQueues, (short)txQueues, conf),
                "rte_eth_dev_configure(port " + portId + ", rxq " + rxQueues + ", txq " + txQueues + ")");
        }
        return this;
    }

    /**
     * {@code rte_eth_dev_configure} with receive-side scaling over {@code rxQueues} queues: the hash types asked for
     * that the device offers ({@code flow_type_rss_offloads}), DPDK's default key, otherwise defaults. With one
     * receive queue, or on a device that offers none of the asked types (virtual devices such as net_ring and
     * net_null), the port is configured without RSS, exactly as {@link #configure} does.
     *
     * @param rssHashTypes {@code RTE_ETH_RSS_*} bits, e.g. {@link #RSS_IPV4_UDP}.
     * @return the hash types in use, 0 when the port is configured without RSS.
     * @throws DpdkException when {@code rte_eth_dev_info_get} or {@code rte_eth_dev_configure} fails.
     */
    public long configureRss(final int rxQueues, final int txQueues, final long rssHashTypes)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment applied = arena.allocate(ValueLayout.JAVA_LONG);
            DpdkException.check(
                inagg_dpdk_shim_h.inagg_eth_dev_configure_rss(
                    (short)portId, (short)rxQueues, (short)txQueues, rssHashTypes, applied),
                "rte_eth_dev_configure(port " + portId + ", rxq " + rxQueues + ", txq " + txQueues + ", rss_hf 0x"
                    + Long.toHexString(rssHashTypes) + ")");
            return applied.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    /** {@code rte_eth_rx_queue_setup} with the default queue configuration; received mbufs come from {@code pool}. */
    public EthPort setupRxQueue(final int queue, final int descriptors, final MbufPool pool)
    {
        DpdkException.check(
            dpdk_h.rte_eth_rx_queue_setup(
                (short)portId, (short)queue, (short)descriptors, socketId(), MemorySegment.NULL, pool.address()),
            "rte_eth_rx_queue_setup(port " + portId + ", queue " + queue + ")");
        return this;
    }

    /** {@code rte_eth_tx_queue_setup} with the default queue configuration. */
    public EthPort setupTxQueue(final int queue, final int descriptors)
    {
        DpdkException.check(
            dpdk_h.rte_eth_tx_queue_setup((short)portId, (short)queue, (short)descriptors, socketId(), MemorySegment.NULL),
            "rte_eth_tx_queue_setup(port " + portId + ", queue " + queue + ")");
        return this;
    }

    /** {@code rte_eth_promiscuous_enable}; ignores devices that do not support it. */
    public EthPort promiscuous()
    {
        final int rc = dpdk_h.rte_eth_promiscuous_enable((short)portId);
        if (rc < 0 && rc != -95 /* ENOTSUP */)
        {
            DpdkException.check(rc, "rte_eth_promiscuous_enable(port " + portId + ")");
        }
        return this;
    }

    /** {@code rte_eth_dev_start}. */
    public EthPort start()
    {
        DpdkException.check(dpdk_h.rte_eth_dev_start((short)portId), "rte_eth_dev_start(port " + portId + ")");
        started = true;
        return this;
    }

    /** {@code rte_eth_dev_stop}. Free the mbufs you still hold first; the driver releases the ones in its rings. */
    public void stop()
    {
        if (started)
        {
            started = false;
            DpdkException.check(dpdk_h.rte_eth_dev_stop((short)portId), "rte_eth_dev_stop(port " + portId + ")");
        }
    }

    public boolean isStarted()
    {
        return started;
    }

    /** Stops if needed, then {@code rte_eth_dev_close}: the port id becomes invalid. */
    @Override
    public void close()
    {
        if (!closed)
        {
            stop();
            closed = true;
            DpdkException.check(dpdk_h.rte_eth_dev_close((short)portId), "rte_eth_dev_close(port " + portId + ")");
        }
    }

    /** {@code rte_eth_stats_get}. */
    public PortStats stats()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment s = arena.allocate(ValueLayout.JAVA_LONG, STATS_COUNT);
            DpdkException.check(inagg_dpdk_shim_h.inagg_eth_stats((short)portId, s), "rte_eth_stats_get(port " + portId + ")");
            return new PortStats(
                s.getAtIndex(ValueLayout.JAVA_LONG, 0), s.getAtIndex(ValueLayout.JAVA_LONG, 1),
                s.getAtIndex(ValueLayout.JAVA_LONG, 2), s.getAtIndex(ValueLayout.JAVA_LONG, 3),
                s.getAtIndex(ValueLayout.JAVA_LONG, 4), s.getAtIndex(ValueLayout.JAVA_LONG, 5),
                s.getAtIndex(ValueLayout.JAVA_LONG, 6), s.getAtIndex(ValueLayout.JAVA_LONG, 7));
        }
    }

    /** {@code rte_eth_stats_reset}. */
    public void resetStats()
    {
        DpdkException.check(dpdk_h.rte_eth_stats_reset((short)portId), "rte_eth_stats_reset(port " + portId + ")");
    }

    /** {@code rte_eth_link_get_nowait}. */
    public LinkStatus link()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment l = arena.allocate(ValueLayout.JAVA_INT, LINK_COUNT);
            DpdkException.check(inagg_dpdk_shim_h.inagg_eth_link((short)portId, l), "rte_eth_link_get_nowait(port " + portId + ")");
            return new LinkStatus(
                l.getAtIndex(ValueLayout.JAVA_INT, 0),
                l.getAtIndex(ValueLayout.JAVA_INT, 1) != 0,
                l.getAtIndex(ValueLayout.JAVA_INT, 2) != 0,
                l.getAtIndex(ValueLayout.JAVA_INT, 3) != 0);
        }
    }

    /** Polls {@link #link()} until up or the timeout passes; returns whether it came up. */
    public boolean awaitLinkUp(final long timeoutMillis) throws InterruptedException
    {
        final long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!link().up())
        {
            if (System.nanoTime() - deadline > 0)
            {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** {@link FastPath#rxBurst} on this port. */
    public int rxBurst(final int queue, final MemorySegment mbufs, final int n)
    {
        return FastPath.rxBurst(portId, queue, mbufs, n);
    }

    /** {@link FastPath#txBurst} on this port. */
    public int txBurst(final int queue, final MemorySegment mbufs, final int n)
    {
        return FastPath.txBurst(portId, queue, mbufs, n);
    }

    @Override
    public String toString()
    {
        return "EthPort{" + portId + "}";
    }
}
