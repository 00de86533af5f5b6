/**
 * The Ethernet / IPv4 / UDP frame around an inagg message, built and parsed in one place
 * ({@link org.inagg.transport.frame.UdpFrameCodec}, which draws the layout): the DPDK transport builds its frames
 * and checks received ones with it, captures synthesize the same headers with it for transports that carry bare
 * messages.
 */
package org.inagg.transport.frame;
