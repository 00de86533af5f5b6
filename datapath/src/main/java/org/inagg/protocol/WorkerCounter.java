package org.inagg.protocol;

/** Counters of a worker agent: fixed type ids (1xx) and labels. */
public enum WorkerCounter
{
    PACKETS_SENT(101, "packets sent"),
    RESULTS_RECEIVED(102, "results received"),
    RETRANSMISSIONS(103, "retransmissions"),
    DUPLICATE_RESULTS(104, "duplicate or late results ignored"),
    MALFORMED(105, "malformed messages dropped"),
    TX_FULL(106, "sends deferred: transport full"),
    ELEMENTS_REDUCED(107, "elements all-reduced"),
    PAYLOAD_BYTES_SENT(108, "payload bytes sent");

    private final int typeId;
    private final String label;

    WorkerCounter(final int typeId, final String label)
    {
        this.typeId = typeId;
        this.label = label;
    }

    public int typeId()
    {
        return typeId;
    }

    public String label()
    {
        return label;
    }
}
