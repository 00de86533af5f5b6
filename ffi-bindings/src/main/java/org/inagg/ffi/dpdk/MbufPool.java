package org.inagg.ffi.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.inagg.ffi.dpdk.extr.dpdk_h;

/**
 * A packet-buffer pool ({@code rte_pktmbuf_pool_create}). Mbuf ownership is exact: every mbuf taken from the pool
 * (allocated here or by a receive burst) is either handed to a transmit burst, which gives it back once sent, or freed
 * with {@link FastPath#free(MemorySegment)} / {@link FastPath#bulkFree(MemorySegment, int)}. {@link #availableCount()}
 * counts the per-lcore caches too, so it returns to its starting value once everything is given back.
 */
public final class MbufPool implements AutoCloseable
{
    /** {@code RTE_MBUF_DEFAULT_BUF_SIZE}: 2048 bytes of data room plus 128 of headroom. */
    public static final int DATA_ROOM_DEFAULT = 2048 + 128;
    /** {@code RTE_MEMPOOL_CACHE_MAX_SIZE}. */
    public static final int CACHE_SIZE_MAX = 512;

    private final String name;
    private final MemorySegment mempool;
    private final int size;
    private boolean closed;

    private MbufPool(final String name, final MemorySegment mempool, final int size)
    {
        this.name = name;
        this.mempool = mempool;
        this.size = size;
    }

    /**
     * Creates a pool.
     *
     * @param name         unique within the process (DPDK names memzones after it).
     * @param count        number of mbufs; {@code 2^q - 1} uses memory best.
     * @param cacheSize    per-lcore cache, at most {@value #CACHE_SIZE_MAX} and {@code count / 1.5}; 0 for none.
     * @param dataRoomSize bytes per mbuf including headroom, e.g. {@link #DATA_ROOM_DEFAULT}.
     * @param socketId     NUMA socket, or {@link Dpdk#SOCKET_ID_ANY}.
     */
    @SuppressWarnings("restricted") // reinterpret(0): an opaque struct rte_mempool *
    public static MbufPool create(
        final String name, final int count, final int cacheSize, final int dataRoomSize, final int socketId)
    {
        if (count <= 0 || cacheSize < 0 || cacheSize > CACHE_SIZE_MAX || dataRoomSize <= 0 || dataRoomSize > 0xFFFF)
        {
            throw new IllegalArgumentException("bad pool geometry: count=" + count + " cacheSize=" + cacheSize +
                " dataRoomSize=" + dataRoomSize);
        }
        NativeLibraryLoader.load();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mp = dpdk_h.rte_pktmbuf_pool_create(
                arena.allocateFrom(name), count, cacheSize, (short)0, (short)dataRoomSize, socketId);
            if (MemorySegment.NULL.equals(mp))
            {
                final int errno = Dpdk.rteErrno();
                throw new DpdkException("rte_pktmbuf_pool_create(" + name + ", n=" + count + ") failed: " +
                    Dpdk.strerror(errno) + " (rte_errno " + errno + ")", errno);
            }
            return new MbufPool(name, mp.reinterpret(0), count);
        }
    }

    public String name()
    {
        return name;
    }

    /** The {@code struct rte_mempool *}. */
    public MemorySegment address()
    {
        return mempool;
    }

    public int size()
    {
        return size;
    }

    /** {@code rte_mempool_avail_count}: free mbufs, per-lcore caches included. */
    public int availableCount()
    {
        return dpdk_h.rte_mempool_avail_count(mempool);
    }

    /** {@code rte_mempool_in_use_count}. */
    public int inUseCount()
    {
        return dpdk_h.rte_mempool_in_use_count(mempool);
    }

    /** One mbuf, reset, or {@code null} when the pool is empty. */
    public MemorySegment alloc()
    {
        final MemorySegment m = FastPath.alloc(mempool);
        return MemorySegment.NULL.equals(m) ? null : m;
    }

    /** Fills {@code mbufs[0..count)} with fresh mbufs, all or none; {@code false} when the pool has too few. */
    public boolean bulkAlloc(final MemorySegment mbufs, final int count)
    {
        return FastPath.bulkAlloc(mempool, mbufs, count);
    }

    /** {@link FastPath#rawBulkAlloc}: mbufs not reset; prepare each with {@link Mbuf#prepareRaw(long, int)}. */
    public boolean rawBulkAlloc(final MemorySegment mbufs, final int count)
    {
        return FastPath.rawBulkAlloc(mempool, mbufs, count);
    }

    /** {@code rte_mempool_free}. Every mbuf should be back first; see {@link #availableCount()}. */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            dpdk_h.rte_mempool_free(mempool);
        }
    }

    @Override
    public String toString()
    {
        return "MbufPool{" + name + ", size=" + size + "}";
    }
}
