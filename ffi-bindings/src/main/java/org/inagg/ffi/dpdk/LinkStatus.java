package org.inagg.ffi.dpdk;

/** {@code struct rte_eth_link} from {@code rte_eth_link_get_nowait}. */
public record LinkStatus(int speedMbps, boolean fullDuplex, boolean autoNegotiated, boolean up)
{
}
