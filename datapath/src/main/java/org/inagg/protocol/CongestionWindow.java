package org.inagg.protocol;

/**
 * How many of the job's slots a worker keeps in flight (AIMD, as TCP NewReno): it starts at the whole pool, grows by one
 * slot per window of results (1 / window per result) up to the pool, and halves on a loss, at most once per loss episode,
 * never below {@link #MIN_WINDOW}. An episode lasts until a packet sent after the cut has its result (NewReno's recovery
 * point, RFC 6582): every loss judged before that belongs to the window that was already cut. Losses at a switch or
 * socket that cannot keep up with W times the window would otherwise be answered with ever more retransmissions.
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
    /** The send stamp of the last packet sent before the cut; the episode ends with a result for a later one. */
    private long recoveryStamp;
    private boolean inRecovery;

    /** The job's pool of {@code slots} slots, all of them open, no loss episode. */
    void reset(final int slots)
    {
        ceiling = slots;
        window = slots;
        inRecovery = false;
    }

    /** Whether one more packet may leave with {@code outstanding} already in flight. */
    boolean allows(final int outstanding)
    {
        return outstanding < window;
    }

    /**
     * The result of a packet last sent with {@code sendStamp} came back: additive increase, and the end of the loss
     * episode if that packet left after the cut.
     */
    void onResult(final long sendStamp)
    {
        if (inRecovery && sendStamp > recoveryStamp)
        {
            inRecovery = false;
        }
        window = Math.min(ceiling, window + 1.0 / window);
    }

    /**
     * A packet was judged lost when the last packet sent had {@code lastSendStamp}: multiplicative decrease, unless a
     * loss episode is open (no packet sent after the last cut has its result yet).
     *
     * @return whether the window was cut.
     */
    boolean onLoss(final long lastSendStamp)
    {
        if (inRecovery)
        {
            return false;
        }
        inRecovery = true;
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
