/**
 * DPDK from Java: {@link org.inagg.ffi.dpdk.Eal} (EAL from an {@link org.inagg.ffi.dpdk.EalConfig}),
 * {@link org.inagg.ffi.dpdk.MbufPool}, {@link org.inagg.ffi.dpdk.EthPort} (ethdev set-up, statistics, link) and
 * {@link org.inagg.ffi.dpdk.FastPath} (bursts and mbuf access, one critical downcall each, allocation-free).
 * {@link org.inagg.ffi.dpdk.NativeLibraryLoader} finds the C shim (src/main/c) that exports DPDK's inline fast
 * path; the raw bindings are generated into {@code extr}.
 */
package org.inagg.ffi.dpdk;
