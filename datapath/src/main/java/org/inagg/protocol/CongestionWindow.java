package org.inagg.protocol;

/**
 * How many of the job's slots a worker keeps in flight (AIMD, as TCP): it starts at the whole pool, grows by one slot
 * per window of results (1 / window per result) up to the pool, and halves on a loss, at most once per retransmission
 * timeout (one loss episode), never below {@link #MIN_WINDOW}. Losses at a switch or socket that cannot keep up with W
 * times the window would otherwise be answered with ever more retransmissions.
 * <p>
 * Not thread safe: it belongs to the worker agent's thread. No allocation.
 */
final class CongestionWindow
{
    /** The smallest window: one packet in flight would serialise the stream on round trips. */
    static final double MIN_WINDOW = 2;

    private int ceiling;
    private double window;
    /** When the window was last cut; only meaningful once {@link #cutOnce}: any long is a valid clock reading. */
    private long lastCutNs;
    private boolean cutOnce;

    /** The job's pool of {@code slots} slots, all of them open. */
    void reset(final int slots)
    {
        ceiling = slots;
        window = slots;
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
     * A packet was judged lost at {@code nowNs}: multiplicative decrease, unless the window was already cut within the
     * last {@code rtoNs} (the same loss episode).
     *
     * @return whether the window was cut.
     */
    boolean onLoss(final long nowNs, final long rtoNs)
    {
        // No sentinel time for "never": nowNs - Long.MIN_VALUE overflows to a negative for every nowNs >= 0, and the
        // window never cut (issue 23).
        if (!cutOnce || nowNs - lastCutNs > rtoNs)
        {
            cutOnce = true;
            lastCutNs = nowNs;
            window = Math.max(MIN_WINDOW, window / 2);
            return true;
        }
        return false;
    }

    /** The window, in packets (fractional while it grows). */
    double size()
    {
        return window;
    }
}
