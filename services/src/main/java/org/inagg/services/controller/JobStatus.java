package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * A job as an operator or its owner sees it at one moment ({@link JobLifecycle#job}, {@link JobLifecycle#jobs}).
 *
 * @param ranks each rank's registration, in rank order, null where the rank holds none.
 */
record JobStatus(String name, int jobId, int session, boolean running, int world, String dtype, long elements,
    int slotBase, int slots, int lanes, int registered, List<RankLease> ranks)
{
    /** One rank's registration: its source, the session it registered into, and the lease it has left. */
    record RankLease(int rank, InetSocketAddress source, int session, long leaseLeftMs)
    {
    }

    /** The jobs a caller may see, and the pool they share. */
    record Listing(List<JobStatus> jobs, int poolSlots, int freeSlots)
    {
    }
}
