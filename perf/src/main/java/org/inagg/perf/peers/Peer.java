package org.inagg.perf.peers;

/** An all-reduce implementation that {@code bench-peers} can measure. */
public interface Peer
{
    /** Short name, the row of the table ("gloo", "Open MPI", ...). */
    String name();

    /** Null when the peer can run on this machine, else what is missing, said so that a user can install it. */
    String unavailableReason();

    /** Runs the all-reduce; a peer that ran and failed answers a {@link PeerResult.Status#FAILED} result. */
    PeerResult run(PeerRun run) throws InterruptedException;

    /** Whether {@link #run} honours a {@link PeerRun#placement()} other than the loopback (an emulated cluster). */
    default boolean runsAcrossHosts()
    {
        return false;
    }

    /**
     * The least time one all-reduce of {@code bytes} per rank can take when every rank's link carries
     * {@code bitsPerSecond} each way: a ring's by default ({@link LinkBounds#ringSeconds}).
     */
    default double boundSeconds(final int ranks, final long bytes, final double bitsPerSecond)
    {
        return LinkBounds.ringSeconds(ranks, bytes, bitsPerSecond);
    }

    /**
     * The same on a leaf-spine fabric. A ring whose ranks are numbered leaf by leaf crosses each uplink once each way,
     * carrying what a host link carries: by default the ring's bound at the slower of the two link rates.
     */
    default double boundSeconds(final int ranks, final long bytes, final FabricPlacement fabric)
    {
        return LinkBounds.ringSeconds(ranks, bytes, Math.min(fabric.hostBitsPerSecond(),
            fabric.uplinkBitsPerSecond()));
    }
}
