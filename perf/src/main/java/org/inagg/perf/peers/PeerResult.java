package org.inagg.perf.peers;

/**
 * What one peer measured at one world size, or why it did not.
 *
 * @param peer              the peer's name.
 * @param workers           ranks.
 * @param elementsPerSecond tensor elements all-reduced per second (elements x iterations / slowest rank's time), NaN
 *                          when not measured.
 * @param status            {@link Status#MEASURED}, {@link Status#SKIPPED} (the peer is not installed here) or
 *                          {@link Status#FAILED} (it ran and did not produce a figure).
 * @param note              the reason when skipped or failed; extra facts (retransmissions) when measured; never null.
 */
public record PeerResult(String peer, int workers, double elementsPerSecond, Status status, String note)
{
    /** How a peer's run ended. */
    public enum Status
    {
        MEASURED, SKIPPED, FAILED
    }

    public static PeerResult measured(final String peer, final int workers, final double elementsPerSecond,
        final String note)
    {
        return new PeerResult(peer, workers, elementsPerSecond, Status.MEASURED, note);
    }

    public static PeerResult skipped(final String peer, final int workers, final String reason)
    {
        return new PeerResult(peer, workers, Double.NaN, Status.SKIPPED, reason);
    }

    public static PeerResult failed(final String peer, final int workers, final String reason)
    {
        return new PeerResult(peer, workers, Double.NaN, Status.FAILED, reason);
    }

    public boolean isMeasured()
    {
        return status == Status.MEASURED;
    }
}
