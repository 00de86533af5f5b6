package org.inagg.protocol;

/**
 * The retransmission timeout of one worker, from the round-trip times it measures (RFC 6298): a smoothed RTT and its
 * mean deviation, RTO = SRTT + max(G, 4 RTTVAR), clamped between a floor and a ceiling, doubled per retransmission of
 * the same packet up to {@link #MAX_BACKOFF_SHIFT} times. Only packets sent once give samples (Karn's rule): the result
 * of a retransmitted packet cannot say which copy it answers.
 * <p>
 * A result comes back when the slowest worker's contribution reached the switch, so the RTT measured here is the
 * job's (other workers' scheduling included), not the path's: that is what the timeout must outwait, or a worker that
 * is only descheduled for a few milliseconds makes every other one resend its whole window. The ceiling keeps a few
 * losses in a row within the peer timeout.
 * <p>
 * Not thread safe: it belongs to the worker agent's thread. No allocation.
 */
public final class RetransmissionTimer
{
    /** Doublings of the timeout for repeated retransmissions of one packet. */
    public static final int MAX_BACKOFF_SHIFT = 3;
    private static final int ALPHA_SHIFT = 3; // alpha = 1/8
    private static final int BETA_SHIFT = 2;  // beta = 1/4
    private static final int K = 4;

    private final long floorNs;
    private final long ceilingNs;
    private final long granularityNs;
    private long srttNs;
    private long rttvarNs;
    private long rtoNs;
    private long samples;

    /**
     * @param floorNs       the smallest timeout (the configured retransmission timeout).
     * @param ceilingNs     the largest timeout, backoff included.
     * @param initialNs     the timeout before the first sample (RFC 6298 says 1 s; a job's first round also waits for
     *                      its slowest worker to start).
     * @param granularityNs the clock's granularity G in the RTO formula (how late a timer may fire).
     */
    public RetransmissionTimer(final long floorNs, final long ceilingNs, final long initialNs, final long granularityNs)
    {
        if (floorNs <= 0 || ceilingNs < floorNs || granularityNs < 0)
        {
            throw new IllegalArgumentException("need 0 < floor <= ceiling and granularity >= 0: floor " + floorNs
                + " ns, ceiling " + ceilingNs + " ns, granularity " + granularityNs + " ns");
        }
        this.floorNs = floorNs;
        this.ceilingNs = ceilingNs;
        this.granularityNs = granularityNs;
        this.rtoNs = clamp(initialNs);
    }

    /** A round trip of a packet sent once, from its send to its result. */
    public void onSample(final long rttNs)
    {
        if (rttNs < 0)
        {
            return;
        }
        if (samples == 0)
        {
            srttNs = rttNs;
            rttvarNs = rttNs >> 1;
        }
        else
        {
            rttvarNs += (Math.abs(srttNs - rttNs) - rttvarNs) >> BETA_SHIFT;
            srttNs += (rttNs - srttNs) >> ALPHA_SHIFT;
        }
        samples++;
        rtoNs = clamp(srttNs + Math.max(granularityNs, (long)K * rttvarNs));
    }

    /** The timeout of a packet already retransmitted {@code retries} times. */
    public long timeoutNs(final int retries)
    {
        return Math.min(ceilingNs, rtoNs << Math.min(Math.max(retries, 0), MAX_BACKOFF_SHIFT));
    }

    /** The current timeout (no backoff). */
    public long rtoNs()
    {
        return rtoNs;
    }

    /** The smoothed round-trip time, 0 before the first sample. */
    public long smoothedRttNs()
    {
        return srttNs;
    }

    /** The round-trip variation (mean deviation), 0 before the first sample. */
    public long rttVariationNs()
    {
        return rttvarNs;
    }

    /** Samples taken so far. */
    public long samples()
    {
        return samples;
    }

    private long clamp(final long ns)
    {
        return Math.max(floorNs, Math.min(ceilingNs, ns));
    }
}
