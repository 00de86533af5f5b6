package org.inagg.ffi.dpdk;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.inagg.ffi.dpdk.extr.inagg_dpdk_shim_h;

/**
 * The per-packet calls, each one downcall into the shim bound with {@code Linker.Option.critical(false)} and no
 * allocation on the Java side.
 *
 * <p>Mbufs travel in caller-owned native arrays of {@code struct rte_mbuf *} (8 bytes each); allocate one per polling
 * thread, e.g. {@code arena.allocate(ValueLayout.ADDRESS, 32)}, and reuse it. Ports and queues are unsigned 16-bit
 * values passed as {@code int}.
 *
 * <p>Ownership: a receive burst hands the caller {@code n} mbufs; a transmit burst takes back the first {@code sent}
 * of them (the driver frees them after sending), and the caller still owns {@code [sent, n)}:
 * retry them or {@link #bulkFree(MemorySegment, int, int) free} them. {@link #txBurstFreeUnsent} does the latter
 * in the same downcall, as testpmd's io mode does.
 */
public final class FastPath
{
    /** Size of one element of an mbuf pointer array. */
    public static final long POINTER_BYTES = ValueLayout.ADDRESS.byteSize();

    private FastPath()
    {
    }

    /** {@code rte_eth_rx_burst}: at most {@code n} mbufs into {@code mbufs[0..)}; returns how many. */
    public static int rxBurst(final int port, final int queue, final MemorySegment mbufs, final int n)
    {
        return Short.toUnsignedInt(inagg_dpdk_shim_h.inagg_rx_burst((short)port, (short)queue, mbufs, (short)n));
    }

    /** {@code rte_eth_tx_burst}: returns how many of {@code mbufs[0..n)} the queue took; the rest stay the caller's. */
    public static int txBurst(final int port, final int queue, final MemorySegment mbufs, final int n)
    {
        return Short.toUnsignedInt(inagg_dpdk_shim_h.inagg_tx_burst((short)port, (short)queue, mbufs, (short)n));
    }

    /** {@code rte_eth_tx_burst}, then frees the mbufs the queue did not take; returns how many were sent. */
    public static int txBurstFreeUnsent(final int port, final int queue, final MemorySegment mbufs, final int n)
    {
        return Short.toUnsignedInt(
            inagg_dpdk_shim_h.inagg_tx_burst_free_unsent((short)port, (short)queue, mbufs, (short)n));
    }

    /** {@code rte_pktmbuf_alloc}: {@link MemorySegment#NULL} when the pool is empty. */
    public static MemorySegment alloc(final MemorySegment mempool)
    {
        return inagg_dpdk_shim_h.inagg_pktmbuf_alloc(mempool);
    }

    /** {@code rte_pktmbuf_alloc_bulk}: all {@code count} or none. */
    public static boolean bulkAlloc(final MemorySegment mempool, final MemorySegment mbufs, final int count)
    {
        return inagg_dpdk_shim_h.inagg_pktmbuf_alloc_bulk(mempool, mbufs, count) == 0;
    }

    /**
     * {@code rte_mempool_get_bulk}, all {@code count} or none, without resetting the mbufs: call
     * {@link Mbuf#prepareRaw(long, int)} on each in the pass that writes the packet (what testpmd's txonly does;
     * about twice the rate of {@link #bulkAlloc} plus a second pass on net_null).
     */
    public static boolean rawBulkAlloc(final MemorySegment mempool, final MemorySegment mbufs, final int count)
    {
        return inagg_dpdk_shim_h.inagg_mbuf_raw_alloc_bulk(mempool, mbufs, count) == 0;
    }

    /** {@code rte_pktmbuf_free}. */
    public static void free(final MemorySegment mbuf)
    {
        inagg_dpdk_shim_h.inagg_pktmbuf_free(mbuf);
    }

    /** {@code rte_pktmbuf_free_bulk} of {@code mbufs[0..count)}. */
    public static void bulkFree(final MemorySegment mbufs, final int count)
    {
        inagg_dpdk_shim_h.inagg_pktmbuf_free_bulk(mbufs, count);
    }

    /** {@code rte_pktmbuf_free_bulk} of {@code mbufs[from..from+count)}. */
    public static void bulkFree(final MemorySegment mbufs, final int from, final int count)
    {
        if (count > 0)
        {
            inagg_dpdk_shim_h.inagg_pktmbuf_free_bulk(
                from == 0 ? mbufs : mbufs.asSlice(from * POINTER_BYTES), count);
        }
    }

    /** {@code mbufs[index]}: the mbuf pointer at that index of an array. */
    public static MemorySegment mbufAt(final MemorySegment mbufs, final int index)
    {
        return mbufs.getAtIndex(ValueLayout.ADDRESS, index);
    }

    /** {@code mbufs[index] = mbuf}. */
    public static void setMbufAt(final MemorySegment mbufs, final int index, final MemorySegment mbuf)
    {
        mbufs.setAtIndex(ValueLayout.ADDRESS, index, mbuf);
    }

    /**
     * {@code rte_pktmbuf_mtod}: the start of the packet data. The segment is unbounded (as jextract types
     * {@code void *}); bound it with {@code reinterpret(length)} or use {@link #data(MemorySegment, long)}.
     */
    public static MemorySegment mbufDataAddress(final MemorySegment mbuf)
    {
        return inagg_dpdk_shim_h.inagg_pktmbuf_mtod(mbuf);
    }

    /** The packet data as a segment of {@code length} bytes. */
    @SuppressWarnings("restricted") // the caller vouches that length fits the mbuf (see tailroom)
    public static MemorySegment data(final MemorySegment mbuf, final long length)
    {
        return inagg_dpdk_shim_h.inagg_pktmbuf_mtod(mbuf).reinterpret(length);
    }

    /** {@code rte_pktmbuf_data_len}: bytes in this segment. */
    public static int dataLen(final MemorySegment mbuf)
    {
        return Short.toUnsignedInt(inagg_dpdk_shim_h.inagg_pktmbuf_data_len(mbuf));
    }

    /** {@code rte_pktmbuf_pkt_len}: bytes in the whole packet. */
    public static int pktLen(final MemorySegment mbuf)
    {
        return inagg_dpdk_shim_h.inagg_pktmbuf_pkt_len(mbuf);
    }

    /** {@code m->data_len = length}. */
    public static void setDataLen(final MemorySegment mbuf, final int length)
    {
        inagg_dpdk_shim_h.inagg_pktmbuf_set_data_len(mbuf, (short)length);
    }

    /** {@code m->pkt_len = length}. */
    public static void setPktLen(final MemorySegment mbuf, final int length)
    {
        inagg_dpdk_shim_h.inagg_pktmbuf_set_pkt_len(mbuf, length);
    }

    /** Both lengths of a single-segment packet in one downcall. */
    public static void setLen(final MemorySegment mbuf, final int length)
    {
        inagg_dpdk_shim_h.inagg_pktmbuf_set_len(mbuf, (short)length);
    }

    /** {@code rte_pktmbuf_headroom}. */
    public static int headroom(final MemorySegment mbuf)
    {
        return Short.toUnsignedInt(inagg_dpdk_shim_h.inagg_pktmbuf_headroom(mbuf));
    }

    /** {@code rte_pktmbuf_tailroom}: bytes writable after the data. */
    public static int tailroom(final MemorySegment mbuf)
    {
        return Short.toUnsignedInt(inagg_dpdk_shim_h.inagg_pktmbuf_tailroom(mbuf));
    }
}
