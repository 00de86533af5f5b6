/**
 * Transports: how messages leave and reach a node. {@link org.inagg.transport.Transport} is the burst claim/commit/poll
 * contract every protocol agent uses; implementations are in-process rings, UDP sockets and DPDK ports (in
 * {@code org.inagg.transport.dpdk}), and {@link org.inagg.transport.FaultInjectingTransport} adds seeded loss,
 * duplication and reordering; {@code org.inagg.transport.capture} writes what a transport carries to a pcap file; both
 * are {@link org.inagg.transport.TransportDecorator}s. A transport a switch registers its workers' sources on (UDP,
 * DPDK) is a {@link org.inagg.transport.SourceRegistry}; over DPDK a registered source is pinned to the link-layer
 * source of its first accepted JOIN ({@link org.inagg.transport.Transport#claimedPeer}).
 * Shared by the UDP and DPDK transports: {@link org.inagg.transport.PeerTable}, the one rule by which a source address
 * becomes a peer number, and {@code org.inagg.transport.frame}, the one Ethernet / IPv4 / UDP codec. The UDP
 * transport's socket I/O is a {@code DatagramIo} chosen once at open: the JDK's channel or sendmmsg/recvmmsg
 * ({@code UdpBatchIo}), over its {@code SendQueue} and {@code UdpPeers}.
 */
package org.inagg.transport;
