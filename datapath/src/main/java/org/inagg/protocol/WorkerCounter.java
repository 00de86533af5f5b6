package org.inagg.protocol;

import org.inagg.agent.CounterDescriptor;

/** Counters of a worker agent: fixed type ids (1xx) and labels; all count up except the gauge SLOTS_IN_USE. */
public enum WorkerCounter implements CounterDescriptor
{
    PACKETS_SENT(101, "packets sent"),
    RESULTS_RECEIVED(102, "results received"),
    RETRANSMISSIONS(103, "retransmissions"),
    DUPLICATE_RESULTS(104, "duplicate or late results ignored"),
    MALFORMED(105, "malformed messages dropped"),
    TX_FULL(106, "sends deferred: transport full"),
    ELEMENTS_REDUCED(107, "elements all-reduced"),
    PAYLOAD_BYTES_SENT(108, "payload bytes sent"),
    /** A gauge: packets sent and not yet answered, each holding one of the job's slots. */
    SLOTS_IN_USE(109, "slots in use (packets awaiting their result)", true),
    /** Loss episodes that halved the congestion window (congestion control on; one per episode, CongestionWindow). */
    WINDOW_CUTS(110, "congestion window cuts");

    private final int typeId;
    private final String label;
    private final boolean gauge;

    WorkerCounter(final int typeId, final String label)
    {
        this(typeId, label, false);
    }

    WorkerCounter(final int typeId, final String label, final boolean gauge)
    {
        this.typeId = typeId;
        this.label = label;
        this.gauge = gauge;
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
    public boolean gauge()
    {
        return gauge;
    }

    @Override
    public String family()
    {
        return "worker";
    }
}
