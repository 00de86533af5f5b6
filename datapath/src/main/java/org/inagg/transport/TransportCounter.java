package org.inagg.transport;

import org.inagg.agent.CounterDescriptor;

/**
 * The counters every transport keeps ({@link TransportCounters}), type ids 5xx: messages and bytes each way, and what
 * it dropped or refused by reason. "Sent" is committed to the transport (queued for the socket's burst, written into a
 * receiver's ring or an mbuf); a message the socket or the NIC then lost counts again under {@link #DROP_UNSENT}.
 * "Received" is handed up to the node; bytes are inagg message bytes (link, IPv4 and UDP headers not included).
 */
public enum TransportCounter implements CounterDescriptor
{
    MESSAGES_SENT(501, "messages sent"),
    BYTES_SENT(502, "message bytes sent"),
    MESSAGES_RECEIVED(503, "messages received"),
    BYTES_RECEIVED(504, "message bytes received"),
    /** UDP and DPDK: no reply could reach the sender. */
    DROP_SOURCE_PORT_ZERO(505, "received, dropped: UDP source port 0"),
    /** DPDK: too short, not IPv4/UDP, another address or port, IPv4 fragments, several segments. */
    DROP_NOT_FOR_US(506, "received, dropped: not a whole IPv4/UDP frame to this node"),
    /** UDP and DPDK: a new sender while the peer table is full, handed up as peer -1 (the node drops it). */
    FROM_STRANGERS(507, "received from a sender beyond the peer table"),
    /** The socket's send queue, the receiver's ring or the mbuf pool was full: the node retries or counts a loss. */
    CLAIMS_REFUSED(508, "sends refused: transport full"),
    /** Committed, then lost: the NIC's transmit queue was full, the socket reported an error, its peer was removed. */
    DROP_UNSENT(509, "sent, then dropped: refused by the socket or the NIC, or its peer removed");

    private final int typeId;
    private final String label;

    TransportCounter(final int typeId, final String label)
    {
        this.typeId = typeId;
        this.label = label;
    }

    @Override
    public int typeId()
    {
        return typeId;
    }

    @Override
    public String label()
    {
        return label;
    }

    @Override
    public String family()
    {
        return "transport";
    }
}
