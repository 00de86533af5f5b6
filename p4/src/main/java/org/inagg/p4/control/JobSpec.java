package org.inagg.p4.control;

import java.util.List;

import org.inagg.p4.softswitch.SwitchJobConfig;

/**
 * One job as the control plane configures it on a switch.
 *
 * @param jobId          job id carried in every packet.
 * @param slots          aggregator slots of the job (each with two shadow copies).
 * @param slotBase       first slot of the job in the switch's shared register pool.
 * @param lanes          int32 lanes per packet.
 * @param multicastGroup the job's multicast group (1..65535): one replica per worker, replication id = worker id.
 * @param workers        the registered endpoint of each worker id, in worker id order; their count is the job's W.
 */
public record JobSpec(int jobId, int slots, int slotBase, int lanes, int multicastGroup, List<WorkerEndpoint> workers)
{
    public JobSpec
    {
        workers = List.copyOf(workers);
        if (workers.isEmpty())
        {
            throw new IllegalArgumentException("job " + jobId + " has no workers");
        }
        if (slotBase < 0)
        {
            throw new IllegalArgumentException("job " + jobId + ": slot base must be >= 0, got " + slotBase);
        }
        if (multicastGroup < 1 || multicastGroup > 0xFFFF)
        {
            throw new IllegalArgumentException("job " + jobId + ": multicast group must be in 1..65535, got "
                + multicastGroup);
        }
        toSwitchJobConfig(jobId, slots, slotBase, lanes, multicastGroup, workers); // the record's own checks
    }

    public int workerCount()
    {
        return workers.size();
    }

    /** The job table row of a software switch, with every worker's peer registered. */
    public SwitchJobConfig toSwitchJobConfig()
    {
        return toSwitchJobConfig(jobId, slots, slotBase, lanes, multicastGroup, workers);
    }

    private static SwitchJobConfig toSwitchJobConfig(
        final int jobId, final int slots, final int slotBase, final int lanes, final int multicastGroup,
        final List<WorkerEndpoint> workers)
    {
        final int[] peers = workers.stream().mapToInt(WorkerEndpoint::peer).toArray();
        return new SwitchJobConfig(jobId, workers.size(), slots, lanes, slotBase, multicastGroup, peers);
    }
}
