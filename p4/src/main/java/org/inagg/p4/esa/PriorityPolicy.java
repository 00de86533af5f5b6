package org.inagg.p4.esa;

/** Where the switch takes a packet's effective priority from (0 lowest, 255 highest). */
public enum PriorityPolicy
{
    /** The header's Priority field, which workers set from their job's static priority ({@code JobContext}). */
    HEADER,
    /** The job table's static priority ({@link EsaJobConfig#priority()}); a worker cannot raise its own. */
    JOB_TABLE,
    /**
     * Shortest remaining first: computed from the job's remaining bytes, which the control plane sets
     * ({@link EsaSwitch#setRemainingBytes}) and the switch decrements by every block it completes;
     * see {@link EsaSwitch#srfPriority(long)}.
     */
    SHORTEST_REMAINING_FIRST
}
