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
}
