package org.inagg.perf.cluster;

/** Transports a {@link LocalCluster} can wire its switch and workers with. */
public enum TransportKind
{
    /** Agrona lock-free rings inside the process. */
    INPROC,
    /** UDP sockets on the loopback interface. */
    UDP
}
