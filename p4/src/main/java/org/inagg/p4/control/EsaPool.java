package org.inagg.p4.control;

import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.PriorityPolicy;

/**
 * The shared aggregator pool of the ESA jobs on a switch ({@code org.inagg.p4.esa.EsaSwitch}; docs/esa.md): in the P4
 * register pool it occupies the copies of slots {@code [slotBase, slotBase + aggregators / 2)}, aggregator {@code i}
 * at copy index {@code 2 * slotBase + i}, so no slot-protocol job may use those slots.
 * <p>
 * Mode and policy are the switch's ({@code EsaSwitchSettings}); the v1model program takes them per job row, and this
 * control plane writes the same values into every ESA row. {@link PriorityPolicy#SHORTEST_REMAINING_FIRST} is written
 * as a job-table priority computed from the job's total bytes at setup ({@code EsaSwitch.srfPriority}); on P4 the
 * control plane must rewrite it as the job progresses (the switch does not decrement remaining bytes itself).
 *
 * @param slotBase    first slot of the pool (its aggregators are the two copies of each slot from there on).
 * @param aggregators aggregators in the pool, N: a power of two, at least 2 (the index is masked with N - 1).
 * @param mode        ESA (preemptive) or ATP (deallocate on acknowledgement).
 * @param policy      where effective priorities come from.
 */
public record EsaPool(int slotBase, int aggregators, AllocationMode mode, PriorityPolicy policy)
{
    /** AggregatorPool's multiplier: aggregator {@code (sequence + job * JOB_MULTIPLIER) mod N}. */
    public static final int JOB_MULTIPLIER = 0x9E3779B1;

    public EsaPool
    {
        if (aggregators < 2 || Integer.bitCount(aggregators) != 1)
        {
            throw new IllegalArgumentException("ESA pool: aggregators must be a power of two >= 2, got " + aggregators);
        }
        if (slotBase < 0 || slotBase + aggregators / 2 > InaggP4.POOL_SLOTS)
        {
            throw new IllegalArgumentException("ESA pool: slots " + slotBase + ".." + (slotBase + aggregators / 2 - 1)
                + " leave the pool of " + InaggP4.POOL_SLOTS);
        }
        if (mode == null || policy == null)
        {
            throw new IllegalArgumentException("ESA pool: mode and policy are required");
        }
    }

    /** Slots the pool occupies. */
    public int slots()
    {
        return aggregators / 2;
    }

    /** Copy index of aggregator 0. */
    public int firstCopy()
    {
        return 2 * slotBase;
    }

    /** The job's offset into the pool: {@code job * 0x9E3779B1 mod N}, added to the sequence by the switch. */
    public int hashOffset(final int jobId)
    {
        return (jobId * JOB_MULTIPLIER) & (aggregators - 1);
    }
}
