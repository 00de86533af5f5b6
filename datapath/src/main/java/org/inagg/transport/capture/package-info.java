/**
 * Packet capture of inagg traffic: {@link org.inagg.transport.capture.PcapTransport} decorates any
 * {@link org.inagg.transport.Transport} and writes what it sends and receives as Ethernet / IPv4 / UDP frames to a
 * classic pcap file ({@link org.inagg.transport.capture.PcapWriter}), framed by
 * {@link org.inagg.transport.capture.FrameHeaders}: real socket addresses over UDP, addresses synthesized from
 * endpoint indices in-process, the frames themselves over DPDK. {@code tools/wireshark/inagg.lua} dissects the files
 * in Wireshark and tshark; docs/observability.md shows both.
 */
package org.inagg.transport.capture;
