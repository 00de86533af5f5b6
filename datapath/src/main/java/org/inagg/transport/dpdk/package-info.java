/**
 * The DPDK transport: inagg messages as Ethernet / IPv4 / UDP frames built and parsed in place in mbufs, sent and
 * received in bursts on one or more DPDK port queues ({@link org.inagg.transport.dpdk.DpdkTransport}, configured by
 * {@link org.inagg.transport.dpdk.DpdkTransportConfig}; its peers' header templates, and the MACs pinned to registered
 * sources, in {@code DpdkPeers}, its transmit stash and bursts in {@code DpdkTxBursts}, its ports found, started and
 * drained by {@link org.inagg.transport.dpdk.DpdkPorts}), and {@link org.inagg.transport.dpdk.DpdkEal}, which starts
 * EAL without pinning the caller's threads. The DPDK calls themselves live in {@code ffi-bindings}.
 */
package org.inagg.transport.dpdk;
