package org.inagg.ffi.dpdk;

/** {@code struct rte_eth_stats}, totals only (no per-queue counters). */
public record PortStats(
    long ipackets,
    long opackets,
    long ibytes,
    long obytes,
    long imissed,
    long ierrors,
    long oerrors,
    long rxNoMbuf)
{
}
