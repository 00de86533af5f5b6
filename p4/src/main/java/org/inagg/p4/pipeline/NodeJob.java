package org.inagg.p4.pipeline;

import org.inagg.p4.membership.JobMembership;

/**
 * One row of a node's job table: the job's id, its W and its {@link JobMembership}, plus what a JOIN_ACK grants and
 * which worker ids this node serves. Each aggregation strategy extends it with the job's aggregation state.
 */
public abstract class NodeJob
{
    private final int jobId;
    private final int workers;
    private final JobMembership membership;

    protected NodeJob(final JobMembership membership)
    {
        this.jobId = membership.jobId();
        this.workers = membership.workers();
        this.membership = membership;
    }

    public final int jobId()
    {
        return jobId;
    }

    public final int workers()
    {
        return workers;
    }

    public final JobMembership membership()
    {
        return membership;
    }

    /** Slots (window) a JOIN_ACK grants. */
    public abstract int joinSlots();

    /** Lanes per packet a JOIN_ACK grants. */
    public abstract int joinLanes();

    /** Whether this node serves worker id {@code worker} (any int): all of them but under two-level aggregation. */
    public boolean serves(final int worker)
    {
        return worker >= 0 && worker < workers;
    }

    /** What the job-installed log line says after "job N installed: ". */
    public abstract String describe();
}
