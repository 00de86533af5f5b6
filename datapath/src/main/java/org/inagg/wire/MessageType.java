package org.inagg.wire;

/** Values of the 4-bit Type field of {@link InaggHeader}. */
public final class MessageType
{
    /** Gradient lanes for aggregation (worker to switch), or their sum ({@link InaggHeader#FLAG_RESULT}). */
    public static final int AGGREGATE = 1;
    /** A worker asks to take part in a job; the switch answers {@link #JOIN_ACK} or {@link #REJECT}. */
    public static final int JOIN = 2;
    /** The switch accepts a join and states the job's parameters. */
    public static final int JOIN_ACK = 3;
    /** The switch refuses a join; Status holds a {@link RejectReason}. */
    public static final int REJECT = 4;

    private MessageType()
    {
    }
}
