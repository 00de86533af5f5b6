/**
 * Transports: how messages leave and reach a node. {@link org.inagg.transport.Transport} is the burst claim/commit/poll
 * contract every protocol agent uses; implementations are in-process rings, UDP sockets and DPDK ports (in
 * {@code org.inagg.transport.dpdk}), and {@link org.inagg.transport.FaultInjectingTransport} adds seeded loss,
 * duplication and reordering.
 */
package org.inagg.transport;
