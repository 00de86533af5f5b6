package org.inagg.perf.cluster;

/** Transports a {@link LocalCluster} can wire its switch and workers with. */
public enum TransportKind
{
    /** Agrona lock-free rings inside the process. */
    INPROC,
    /** UDP sockets on the loopback interface. */
    UDP,
    /** DPDK: Ethernet/IPv4/UDP frames in mbufs over net_ring ports, one per worker-switch link (DpdkRingNetwork). */
    DPDK
}
