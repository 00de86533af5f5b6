package org.inagg.p4.control;

import java.util.Map;

/**
 * The checks a {@link JobTable} makes before it takes a job: job ids, multicast groups and slot ranges never shared,
 * ranges inside the pool, lanes and workers within what a P4 program covers. The TNA program's own limits are
 * {@link BfrtScript}'s.
 */
final class JobValidator
{
    private JobValidator()
    {
    }

    /**
     * Refuses a slot-protocol job whose id or multicast group is taken, or whose slots overlap another job's or the ESA
     * pool's ({@code esaPool} may be null) or leave the pool of {@link InaggP4#POOL_SLOTS}.
     */
    static void checkSlotJob(
        final JobSpec job, final Map<Integer, JobSpec> jobs, final Map<Integer, EsaJobSpec> esaJobs,
        final EsaPool esaPool)
    {
        if (jobs.containsKey(job.jobId()))
        {
            throw new IllegalArgumentException("job " + job.jobId() + " is already in the table");
        }
        if (job.slotBase() + job.slots() > InaggP4.POOL_SLOTS)
        {
            throw new IllegalArgumentException("job " + job.jobId() + ": slots " + job.slotBase() + ".."
                + (job.slotBase() + job.slots() - 1) + " leave the pool of " + InaggP4.POOL_SLOTS);
        }
        for (final JobSpec other : jobs.values())
        {
            if (!job.isUpstream() && other.multicastGroup() == job.multicastGroup())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": multicast group " + job.multicastGroup()
                    + " is job " + other.jobId() + "'s");
            }
            if (job.slotBase() < other.slotBase() + other.slots() && other.slotBase() < job.slotBase() + job.slots())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": slots " + job.slotBase() + ".."
                    + (job.slotBase() + job.slots() - 1) + " overlap job " + other.jobId() + "'s slots "
                    + other.slotBase() + ".." + (other.slotBase() + other.slots() - 1));
            }
        }
        if (esaPool != null)
        {
            checkDisjoint(esaPool.slotBase(), esaPool.slots(), "the ESA pool", job);
        }
        if (!esaJobs.isEmpty())
        {
            // an upstream job's group 0 is never an ESA job's
            checkNew(job.jobId(), job.multicastGroup(), jobs, esaJobs);
        }
    }

    /** Refuses a job id already in the table, or a multicast group a job there uses. */
    static void checkNew(
        final int jobId, final int group, final Map<Integer, JobSpec> jobs, final Map<Integer, EsaJobSpec> esaJobs)
    {
        if (jobs.containsKey(jobId) || esaJobs.containsKey(jobId))
        {
            throw new IllegalArgumentException("job " + jobId + " is already in the table");
        }
        for (final JobSpec other : jobs.values())
        {
            if (other.multicastGroup() == group)
            {
                throw new IllegalArgumentException("job " + jobId + ": multicast group " + group + " is job "
                    + other.jobId() + "'s");
            }
        }
        for (final EsaJobSpec other : esaJobs.values())
        {
            if (other.multicastGroup() == group || other.flushGroup() == group)
            {
                throw new IllegalArgumentException("job " + jobId + ": multicast group " + group + " is job "
                    + other.jobId() + "'s");
            }
        }
    }

    /** Refuses a slot range that overlaps {@code other}'s. */
    static void checkDisjoint(final int base, final int slots, final String what, final JobSpec other)
    {
        if (base < other.slotBase() + other.slots() && other.slotBase() < base + slots)
        {
            throw new IllegalArgumentException(what + ": slots " + base + ".." + (base + slots - 1)
                + " overlap job " + other.jobId() + "'s slots " + other.slotBase() + ".."
                + (other.slotBase() + other.slots() - 1));
        }
    }

    /** Refuses a job of more lanes than {@code maxLanes} or more workers than the P4 seen bitmaps cover. */
    static void checkFits(final JobSpec job, final int maxLanes, final String program)
    {
        checkFits(job.jobId(), job.lanes(), job.workerCount(), maxLanes, program);
    }

    static void checkFits(
        final int jobId, final int lanes, final int workers, final int maxLanes, final String program)
    {
        if (lanes > maxLanes)
        {
            throw new IllegalArgumentException("job " + jobId + ": " + lanes
                + " lanes per packet; the " + program + " program aggregates at most " + maxLanes);
        }
        if (workers > InaggP4.MAX_WORKERS)
        {
            throw new IllegalArgumentException("job " + jobId + ": " + workers
                + " workers; the P4 seen bitmaps cover at most " + InaggP4.MAX_WORKERS);
        }
    }
}
