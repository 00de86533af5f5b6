package org.inagg.protocol;

/**
 * How many of the job's slots a worker keeps in flight (AIMD, as TCP): it starts at the whole pool, grows by one
 * slot per window of results (1 / window per result) up to the pool, and halves on a loss, at most once per loss
 * episode, never below {@link #MIN_WINDOW}. An episode starts at a cut and covers every packet sent before it: the loss
 * of such a packet, judged before or after the episode's first result, never cuts again (the recovery period of
 * RFC 9002, section 7.3.2, and Linux); a packet sent after the cut opens a new episode when it is lost. Losses at a
 * switch or socket that cannot keep up with W times the window would otherwise be answered with ever more
 * retransmissions.
 * <p>
 * An episode is bounded by send order, not by time: a cut per retransmission timeout (2 ms) halved the windows of 64
 * workers at 10 % faults hundreds of times a second, since nearly every slot then waits for some worker's loss, and an
 * all-reduce of 1 Mi elements took minutes (issue 23).
 * <p>
 * Not thread safe: it belongs to the worker agent's thread. No allocation.
 */
final class CongestionWindow
{
    /** The smallest window: one packet in flight would serialise the stream on round trips. */
    static final double MIN_WINDOW = 2;

    private int ceiling;
    private double window;
    /** The send stamp of the last packet sent before the last cut; a loss of a later packet is a new episode. */
    private long recoveryStamp;
    private boolean cutOnce;

    /** The job's pool of {@code slots} slots, all of them open, no loss episode. */
    void reset(final int slots)
    {
        ceiling = slots;
        window = slots;
        cutOnce = false;
    }

    /** Whether one more packet may leave with {@code outstanding} already in flight. */
    boolean allows(final int outstanding)
    {
        return outstanding < window;
    }

    /** A result came back: additive increase. */
    void onResult()
    {
        window = Math.min(ceiling, window + 1.0 / window);
    }

    /**
     * A packet last sent with {@code lostStamp} was judged lost when the last packet sent had {@code lastSendStamp}:
     * multiplicative decrease, unless the lost packet left before the last cut (the same loss episode).
     *
     * @return whether the window was cut.
     */
    boolean onLoss(final long lostStamp, final long lastSendStamp)
    {
        if (cutOnce && lostStamp <= recoveryStamp)
        {
            return false;
        }
        cutOnce = true;
        recoveryStamp = lastSendStamp;
        window = Math.max(MIN_WINDOW, window / 2);
        return true;
    }

    /** The window, in packets (fractional while it grows). */
    double size()
    {
        return window;
    }
}
