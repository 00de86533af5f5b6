package org.inagg.p4.softswitch;

import java.util.Arrays;

import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.pipeline.NodeJob;

/**
 * A job of the software switch: its configuration, its {@link SlotPool} (replaced by a fresh one when a session
 * starts), the workers this switch serves and where a complete round goes ({@link RoundOutput}).
 */
final class SlotJob extends NodeJob
{
    final SwitchJobConfig config;
    /** Replaced by a fresh pool when a new session starts. */
    SlotPool pool;
    /** Workers this switch serves: all of the job's, or the local ones under two-level aggregation. */
    private final boolean[] local;
    /** Fresh contributions that complete a round: the number of local workers. */
    final int contributors;
    final RoundOutput output;
    private final String description;

    SlotJob(final SwitchJobConfig config, final int[] localWorkers, final RoundOutput output,
        final String description)
    {
        super(new JobMembership(config.jobId(), config.workers(), config.workerPeers(), config.joinCredentials(),
            config.session(), true));
        this.config = config;
        this.local = new boolean[config.workers()];
        if (localWorkers == null)
        {
            Arrays.fill(local, true);
            contributors = config.workers();
        }
        else
        {
            for (final int worker : localWorkers)
            {
                local[worker] = true;
            }
            contributors = localWorkers.length;
        }
        this.output = output;
        this.description = description;
        this.pool = newPool();
    }

    SlotPool newPool()
    {
        return new SlotPool(config.slots(), config.workers(), contributors, config.lanesPerPacket());
    }

    @Override
    public boolean serves(final int worker)
    {
        return worker >= 0 && worker < local.length && local[worker];
    }

    @Override
    public int joinSlots()
    {
        return config.slots();
    }

    @Override
    public int joinLanes()
    {
        return config.lanesPerPacket();
    }

    @Override
    public String describe()
    {
        return description;
    }
}
