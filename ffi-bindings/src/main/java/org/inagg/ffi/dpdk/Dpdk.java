package org.inagg.ffi.dpdk;

import java.lang.foreign.MemorySegment;

import org.inagg.ffi.dpdk.extr.dpdk_h;
import org.inagg.ffi.dpdk.extr.inagg_dpdk_shim_h;

/**
 * Small process-wide helpers: error strings, {@code rte_errno}, lcores and sockets.
 */
public final class Dpdk
{
    /** {@code SOCKET_ID_ANY}. */
    public static final int SOCKET_ID_ANY = -1;

    private Dpdk()
    {
    }

    /** {@code rte_strerror(errno)}: DPDK's own codes and the libc ones. */
    public static String strerror(final int errno)
    {
        NativeLibraryLoader.load();
        final MemorySegment s = dpdk_h.rte_strerror(errno);
        return MemorySegment.NULL.equals(s) ? "errno " + errno : s.getString(0);
    }

    /** {@code rte_errno} of the calling thread. */
    public static int rteErrno()
    {
        NativeLibraryLoader.load();
        return inagg_dpdk_shim_h.inagg_errno();
    }

    /** {@code rte_lcore_id()} of the calling thread: {@code 0xFFFFFFFF} (LCORE_ID_ANY) for unregistered threads. */
    public static int lcoreId()
    {
        return inagg_dpdk_shim_h.inagg_lcore_id();
    }

    /** {@code rte_socket_id()} of the calling thread. */
    public static int socketId()
    {
        return dpdk_h.rte_socket_id();
    }
}
