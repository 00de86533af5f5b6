package org.inagg.services.softswitch;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.inagg.p4.softswitch.SwitchJobConfig;

/**
 * Admission by default (docs/sessions.md): every job a switch is started with has all its workers' sources registered
 * (with {@code --upstream}: those of its local workers, the only ones that switch serves), or {@code --open} says the
 * switch is a lab's. Shared by the software switch and the ESA switch.
 */
public final class Admission
{
    private Admission()
    {
    }

    /**
     * @param sourcesByJob each job's worker sources, indexed by worker id (null where not given).
     * @param localWorkers with {@code --upstream}, the worker ids this switch serves; null for a one-level switch.
     * @throws IllegalArgumentException naming the job and the workers whose sources are missing, and what to do.
     */
    public static void check(
        final List<SwitchJobConfig> jobs, final Map<Integer, InetSocketAddress[]> sourcesByJob, final boolean open,
        final int[] localWorkers)
    {
        for (final SwitchJobConfig job : jobs)
        {
            final InetSocketAddress[] row = sourcesByJob.get(job.jobId());
            final List<Integer> missing = new ArrayList<>();
            final List<Integer> foreign = new ArrayList<>();
            for (int w = 0; w < job.workers(); w++)
            {
                final boolean served = localWorkers == null || contains(localWorkers, w);
                if (served && (row == null || row[w] == null))
                {
                    missing.add(w);
                }
                if (!served && row != null && row[w] != null)
                {
                    foreign.add(w);
                }
            }
            if (!foreign.isEmpty())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": --source gives worker(s) " + foreign
                    + ", which this switch does not serve (--local-workers " + Arrays.toString(localWorkers)
                    + "): register them where they send (another switch, or the parameter server)");
            }
            if (row != null && !missing.isEmpty())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": --source gives some workers' sources but"
                    + " not those of worker(s) " + missing + "; give all of them, or none with --open");
            }
            if (row == null && !open)
            {
                throw new IllegalArgumentException("job " + job.jobId() + " has no registered sources, so any sender"
                    + " could join, restart or feed it: give each worker's source with --source " + job.jobId()
                    + ":WORKER=HOST:PORT (workers bind it with --bind), let bin/inagg controller register them"
                    + " (--control), or run a lab switch with --open");
            }
        }
    }

    static boolean contains(final int[] workers, final int worker)
    {
        for (final int w : workers)
        {
            if (w == worker)
            {
                return true;
            }
        }
        return false;
    }
}
