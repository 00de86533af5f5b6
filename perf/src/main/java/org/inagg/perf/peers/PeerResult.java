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
 * @param p50Seconds        the median all-reduce's time (of the slowest rank, per call), NaN where the peer does not
 *                          report it.
 * @param cpuSecondsPerOp   the CPU time of all the peer's processes (every rank, and a switch) over the timed
 *                          all-reduces, per all-reduce; NaN where the peer does not report it.
 */
public record PeerResult(String peer, int workers, double elementsPerSecond, Status status, String note,
    double p50Seconds, double cpuSecondsPerOp)
{
    /** How a peer's run ended. */
    public enum Status
    {
        MEASURED, SKIPPED, FAILED
    }

    public static PeerResult measured(final String peer, final int workers, final double elementsPerSecond,
        final String note)
    {
        return measured(peer, workers, elementsPerSecond, Double.NaN, note);
    }

    public static PeerResult measured(final String peer, final int workers, final double elementsPerSecond,
        final double p50Seconds, final String note)
    {
        return new PeerResult(peer, workers, elementsPerSecond, Status.MEASURED, note, p50Seconds, Double.NaN);
    }

    public static PeerResult skipped(final String peer, final int workers, final String reason)
    {
        return new PeerResult(peer, workers, Double.NaN, Status.SKIPPED, reason, Double.NaN, Double.NaN);
    }

    public static PeerResult failed(final String peer, final int workers, final String reason)
    {
        return new PeerResult(peer, workers, Double.NaN, Status.FAILED, reason, Double.NaN, Double.NaN);
    }

    /** This result with the CPU time per all-reduce (NaN: not known). */
    public PeerResult withCpuSecondsPerOp(final double seconds)
    {
        return new PeerResult(peer, workers, elementsPerSecond, status, note, p50Seconds, seconds);
    }

    public boolean isMeasured()
    {
        return status == Status.MEASURED;
    }
}
