package org.inagg.ffi.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.inagg.ffi.dpdk.extr.inagg_dpdk_shim_h;

/**
 * In-place access to the per-packet fields of a {@code struct rte_mbuf} given by its address as a {@code long}: no
 * downcall and no allocation, for loops that touch every packet. The field offsets come from the shim
 * ({@code inagg_mbuf_layout}, i.e. {@code offsetof} in the DPDK the shim was built against), not from constants here.
 *
 * <pre>
 *  struct rte_mbuf (DPDK 22.11, 128 bytes, 64-byte aligned); only the fields used here:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 buf_addr (void *, 64 bits)  @0                 |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |      ... (buf_iova / next)  @8                                 |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |   data_off (u16) @16          |  refcnt, nb_segs, port ...     |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 ol_flags (u64) @24                             |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 packet_type (u32) @32                          |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                    pkt_len (u32) @36                           |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |   data_len (u16) @40          |  vlan_tci (u16) @42            |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |      ... rss/fdir @44, vlan_tci_outer @52                      |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |   buf_len (u16) @54           |  pool ...                      |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  packet data = buf_addr + data_off; headroom = data_off;
 *  tailroom = buf_len - data_off - data_len.
 * </pre>
 * Offsets drawn are those of DPDK 22.11 on x86-64; the code uses whatever the shim reports.
 */
public final class Mbuf
{
    /** The whole address space: read and write packet bytes at {@link #dataAddress(long)} through it. */
    @SuppressWarnings("restricted") // unbounded by design: mbufs and their data live anywhere in DPDK's memory
    public static final MemorySegment MEMORY = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static final ValueLayout.OfLong POINTER = ValueLayout.JAVA_LONG;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT;

    private static final long BUF_ADDR;
    private static final long DATA_OFF;
    private static final long PKT_LEN;
    private static final long DATA_LEN;
    private static final long BUF_LEN;
    private static final long OL_FLAGS;
    private static final long PACKET_TYPE;
    /** {@code RTE_PKTMBUF_HEADROOM}. */
    public static final int HEADROOM_DEFAULT;
    /** {@code sizeof(struct rte_mbuf)}. */
    public static final int SIZE;

    static
    {
        NativeLibraryLoader.load();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment out = arena.allocate(ValueLayout.JAVA_INT, 9);
            final int n = inagg_dpdk_shim_h.inagg_mbuf_layout(out);
            if (n != 9)
            {
                throw new IllegalStateException("shim reports " + n + " mbuf layout fields, expected 9");
            }
            BUF_ADDR = out.getAtIndex(ValueLayout.JAVA_INT, 0);
            DATA_OFF = out.getAtIndex(ValueLayout.JAVA_INT, 1);
            PKT_LEN = out.getAtIndex(ValueLayout.JAVA_INT, 2);
            DATA_LEN = out.getAtIndex(ValueLayout.JAVA_INT, 3);
            BUF_LEN = out.getAtIndex(ValueLayout.JAVA_INT, 4);
            SIZE = out.getAtIndex(ValueLayout.JAVA_INT, 5);
            OL_FLAGS = out.getAtIndex(ValueLayout.JAVA_INT, 6);
            PACKET_TYPE = out.getAtIndex(ValueLayout.JAVA_INT, 7);
            HEADROOM_DEFAULT = out.getAtIndex(ValueLayout.JAVA_INT, 8);
        }
    }

    private Mbuf()
    {
    }

    /** {@code mbufs[index]} as an address. */
    public static long at(final MemorySegment mbufs, final int index)
    {
        return mbufs.getAtIndex(POINTER, index);
    }

    /** {@code mbufs[index] = mbuf}. */
    public static void set(final MemorySegment mbufs, final int index, final long mbuf)
    {
        mbufs.setAtIndex(POINTER, index, mbuf);
    }

    /** {@code rte_pktmbuf_mtod}: address of the first packet byte. */
    public static long dataAddress(final long mbuf)
    {
        return MEMORY.get(POINTER, mbuf + BUF_ADDR) + Short.toUnsignedInt(MEMORY.get(U16, mbuf + DATA_OFF));
    }

    public static int dataLen(final long mbuf)
    {
        return Short.toUnsignedInt(MEMORY.get(U16, mbuf + DATA_LEN));
    }

    public static int pktLen(final long mbuf)
    {
        return MEMORY.get(U32, mbuf + PKT_LEN);
    }

    public static void setDataLen(final long mbuf, final int length)
    {
        MEMORY.set(U16, mbuf + DATA_LEN, (short)length);
    }

    public static void setPktLen(final long mbuf, final int length)
    {
        MEMORY.set(U32, mbuf + PKT_LEN, length);
    }

    /** Both lengths of a single-segment packet. */
    public static void setLen(final long mbuf, final int length)
    {
        MEMORY.set(U16, mbuf + DATA_LEN, (short)length);
        MEMORY.set(U32, mbuf + PKT_LEN, length);
    }

    /**
     * Makes an mbuf from {@link FastPath#rawBulkAlloc} a single-segment packet of {@code length} bytes: default
     * headroom ({@code rte_pktmbuf_reset_headroom}), both lengths, no offload flags, no packet type. Freed mbufs
     * already have {@code next = NULL}, {@code nb_segs = 1}, {@code refcnt = 1}.
     *
     * @return the address of the first packet byte.
     */
    public static long prepareRaw(final long mbuf, final int length)
    {
        final int dataOff = Math.min(HEADROOM_DEFAULT, Short.toUnsignedInt(MEMORY.get(U16, mbuf + BUF_LEN)));
        MEMORY.set(U16, mbuf + DATA_OFF, (short)dataOff);
        MEMORY.set(U16, mbuf + DATA_LEN, (short)length);
        MEMORY.set(U32, mbuf + PKT_LEN, length);
        MEMORY.set(POINTER, mbuf + OL_FLAGS, 0L);
        MEMORY.set(U32, mbuf + PACKET_TYPE, 0);
        return MEMORY.get(POINTER, mbuf + BUF_ADDR) + dataOff;
    }

    /** {@code rte_pktmbuf_headroom}. */
    public static int headroom(final long mbuf)
    {
        return Short.toUnsignedInt(MEMORY.get(U16, mbuf + DATA_OFF));
    }

    /** {@code rte_pktmbuf_tailroom}. */
    public static int tailroom(final long mbuf)
    {
        return Short.toUnsignedInt(MEMORY.get(U16, mbuf + BUF_LEN)) - headroom(mbuf) - dataLen(mbuf);
    }
}
