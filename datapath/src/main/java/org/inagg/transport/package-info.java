/**
 * Transports: how messages leave and reach a node. {@link org.inagg.transport.Transport} is the burst claim/commit/poll
 * contract every protocol agent uses; implementations are in-process rings, UDP sockets and DPDK ports (in
 * {@code org.inagg.transport.dpdk}), and {@link org.inagg.transport.FaultInjectingTransport} adds seeded loss,
 * duplication and reordering; {@code org.inagg.transport.capture} writes what a transport carries to a pcap file.
 */
package org.inagg.transport;
