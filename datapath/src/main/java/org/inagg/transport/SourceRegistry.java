package org.inagg.transport;

import java.net.InetSocketAddress;

/**
 * A transport whose peers can be registered by IPv4 address and UDP port while it runs: how a switch admits its jobs'
 * workers ({@code --source}, or the controller through the switch's control port), the same over UDP and DPDK. The
 * registered peer is the number the switch's job table compares each message's peer with. Over DPDK a registered
 * source has no MAC and link until a JOIN the switch accepts from that address pins them ({@link Transport#pin}).
 * <p>
 * Not thread safe: call on the transport's polling thread.
 */
public interface SourceRegistry
{
    /**
     * Registers {@code source} as a peer (or finds it, and keeps it from then on if it was learned) and returns its
     * number, or {@link Transport#NO_PEER} when the peer table is full.
     *
     * @throws IllegalArgumentException for an address that is not IPv4 or has port 0.
     */
    int addPeer(InetSocketAddress source);

    /**
     * Forgets peer {@code peer} (a job's registered source, when the job is removed): its messages are strangers' again
     * and its number goes to the next peer added.
     *
     * @return whether there was such a peer.
     */
    boolean removePeer(int peer);

    /** The IPv4 address and UDP port of peer {@code peer}, or null when there is no such peer. */
    InetSocketAddress peerAddress(int peer);

    /** The IPv4 address and UDP port messages to this node are sent to. */
    InetSocketAddress localAddress();
}
