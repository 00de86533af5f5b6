package org.inagg.transport;

import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;

/**
 * How a {@link UdpTransport} moves datagrams through its socket, chosen once when it opens: the JDK's
 * {@link DatagramChannel}, one system call per datagram ({@link JdkDatagramIo}), or {@code sendmmsg}/{@code recvmmsg}
 * with UDP GSO/GRO on the same socket's descriptor ({@link MmsgDatagramIo}). Implementations allocate nothing per
 * packet, except where the JDK hands a new sender's address up.
 */
interface DatagramIo
{
    /** System property: false keeps the JDK's one-datagram-per-call I/O instead of sendmmsg/recvmmsg. */
    String BATCH_PROP_NAME = "inagg.udp.batch";

    /**
     * Sends what waits in {@code queue}, in order, leaving what the socket did not take queued in order.
     *
     * @return packets sent.
     */
    int send(SendQueue queue, UdpPeers peers);

    /**
     * Receives up to {@code limit} packets without waiting, numbering each sender through {@code peers}, and hands
     * them up one by one.
     *
     * @return packets handed up.
     */
    int receive(UdpPeers peers, MessageHandler handler, int limit);

    /** A peer got {@code address} (registered or learned): not per packet. */
    void peerAdded(int peer, InetSocketAddress address);

    /** How datagrams are sent and received, in words. */
    String describe();

    /** Releases what the I/O holds beyond the channel (which its transport closes). */
    void close();

    /**
     * Attaches {@code program} (classic BPF, {@link ReusePortSteering}) to the socket's SO_REUSEPORT group: it picks
     * which of the group's sockets takes each datagram.
     *
     * @return null when attached, else why not.
     */
    String attachReusePortProgram(ReusePortSteering program);

    /**
     * The batch I/O unless {@link #BATCH_PROP_NAME} is false or it cannot be used here, else the JDK's.
     *
     * @param channel bound, non-blocking.
     */
    static DatagramIo open(
        final DatagramChannel channel, final InetSocketAddress local, final int burst, final int maxPeers,
        final int maxMessageLength)
    {
        final StringBuilder why = new StringBuilder();
        final UdpBatchIo batch = Boolean.parseBoolean(System.getProperty(BATCH_PROP_NAME, "true"))
            ? UdpBatchIo.open(local, burst, maxPeers, why) : null;
        if (batch != null)
        {
            return new MmsgDatagramIo(batch, burst, maxMessageLength);
        }
        if (why.isEmpty())
        {
            why.append(BATCH_PROP_NAME).append("=false");
        }
        return new JdkDatagramIo(channel, why.toString());
    }
}
