package org.inagg.transport;

import java.lang.foreign.MemorySegment;

/**
 * A port that moves inagg messages (header and lanes; link, network and transport headers are the transport's
 * business) between this node and its peers, in bursts, without allocation.
 * <p>
 * Sending is claim, write in place, then commit (or abort): {@link #claim} reserves room for one message and returns its
 * offset in {@link #txMemory()}; the caller writes the message there and calls {@link #commit()}, which sends it or
 * queues it for the burst that {@link #flush()} pushes out. One claim may be open at a time. A failed claim
 * ({@link #CLAIM_FAILED}) means the transport is momentarily full: the caller retries later or treats the message as
 * lost (the protocol recovers losses).
 * <p>
 * Peers are small integers. Which peer is which depends on the transport (an endpoint index in-process, a registered
 * or learned address over UDP); receivers get the sender's peer number with each message.
 * <p>
 * Not thread safe: a transport belongs to the one agent that polls it.
 */
public interface Transport extends AutoCloseable
{
    long CLAIM_FAILED = -1;
    /** No such peer: a stranger beyond the peer table, or (from {@link #claimedPeer}) no registered peer claimed. */
    int NO_PEER = -1;

    /** Largest message (inagg header and lanes) this transport carries. */
    int maxMessageLength();

    /** The memory that offsets returned by {@link #claim} refer to. */
    MemorySegment txMemory();

    /**
     * Reserves room for a message of {@code length} bytes to {@code peer}.
     *
     * @return the offset in {@link #txMemory()} to write the message at, or {@link #CLAIM_FAILED}.
     */
    long claim(int peer, int length);

    /** Sends, or queues for the next {@link #flush()}, the claimed message. */
    void commit();

    /** Gives back the claimed message unsent. */
    void abort();

    /** Pushes out queued messages. @return how many were sent. */
    int flush();

    /**
     * Hands up to {@code limit} received messages to {@code handler}; the memory passed to the handler is valid only
     * during the call.
     *
     * @return the number of messages handled.
     */
    int poll(MessageHandler handler, int limit);

    /**
     * Blocks until a message may be received or {@code timeoutNs} passed, for an idle agent that has nothing to do
     * until then; a transport that cannot block (rings, polled NICs) answers false at once and the caller parks.
     *
     * @return true when this transport waited (whether or not something arrived).
     */
    default boolean awaitReceive(final long timeoutNs)
    {
        return false;
    }

    /**
     * Link-layer pinning of registered sources. A transport whose peers are more than an IPv4 address and UDP port
     * (DPDK: a MAC address and a link too) hands up a message that comes from a registered source's address but not
     * from the link-layer source pinned to it (another MAC, or none pinned yet) as another peer, an <i>unpinned</i>
     * one; this answers, for such a peer, the registered peer whose address it came from, so that a JOIN the node
     * accepts for that source can {@link #pin} it. {@link #NO_PEER} for every other peer, and always on transports
     * that need no pinning (UDP, where the address is the whole source; in-process rings).
     */
    default int claimedPeer(final int peer)
    {
        return NO_PEER;
    }

    /** Whether registered peer {@code peer} has a link-layer source pinned (always, on transports without pinning). */
    default boolean isPinned(final int peer)
    {
        return true;
    }

    /**
     * Pins the link-layer source of the message being handed up now, from unpinned peer {@code unpinnedPeer}, to the
     * registered peer it claims ({@link #claimedPeer}): from then on only that source's messages are that peer's, and
     * replies to it go there. Call only from the handler, during that message's call, after the node accepted its JOIN.
     *
     * @return whether it pinned: false when {@code unpinnedPeer} is not the peer of the message being handed up now
     *         (e.g. a message a fault-injecting wrapper held back and hands up later), and on transports without
     *         pinning.
     */
    default boolean pin(final int unpinnedPeer)
    {
        return false;
    }

    /**
     * This transport's counters ({@link TransportCounter}): messages and bytes each way, drops and refusals by reason;
     * {@link TransportCounters#NOT_COUNTED} on a transport that does not count (a test's fake). A decorator answers
     * its inner transport's: they count what the link carried.
     */
    default TransportCounters counters()
    {
        return TransportCounters.NOT_COUNTED;
    }

    /**
     * Counts into {@code counters} from now on (a set in the process's counters file, {@link TransportCounters#in}),
     * adding what was counted so far. Call before the transport's agent runs, or on its thread. A transport that does
     * not count ignores it.
     */
    default void countInto(final TransportCounters counters)
    {
    }

    /** A human-readable name of the peer for errors and logs. */
    String describePeer(int peer);

    @Override
    void close();
}
