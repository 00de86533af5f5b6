package org.inagg.p4.control;

import java.util.List;

import org.inagg.p4.esa.EsaJobConfig;
import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.PriorityPolicy;

/**
 * One job of the shared ESA pool ({@link EsaPool}) as the control plane configures it on a switch.
 *
 * @param jobId          job id carried in every packet.
 * @param window         slots the JOIN_ACK offers (blocks in flight per worker; may exceed the pool).
 * @param lanes          most int32 lanes per packet.
 * @param multicastGroup the job's results: one replica per worker (replication id = worker id) and one to the
 *                       server (replication id 65535), which egress turns into the COMPLETE PARTIAL.
 * @param flushGroup     two replicas to the server (ids 65534, then 65535): the PARTIAL and the RAW that a
 *                       retransmission flushing its block sends, in that order.
 * @param priority       static priority, 0..255 ({@link PriorityPolicy#JOB_TABLE}).
 * @param totalBytes     the job's gradient bytes (the start of shortest-remaining-first).
 * @param workers        the registered endpoint of each worker id, in worker id order; their count is the job's W
 *                       (at least 2: a one-worker block completing while it evicts another would need three packets).
 * @param server         the job's parameter server: its port, addresses, and the only source of results.
 */
public record EsaJobSpec(
    int jobId, int window, int lanes, int multicastGroup, int flushGroup, int priority, long totalBytes,
    List<WorkerEndpoint> workers, WorkerEndpoint server)
{
    public EsaJobSpec
    {
        workers = List.copyOf(workers);
        if (workers.size() < 2)
        {
            throw new IllegalArgumentException("job " + jobId + ": an ESA job needs at least 2 workers on P4");
        }
        if (server == null)
        {
            throw new IllegalArgumentException("job " + jobId + ": an ESA job needs a parameter server");
        }
        for (final int group : new int[] {multicastGroup, flushGroup})
        {
            if (group < 1 || group > 0xFFFF)
            {
                throw new IllegalArgumentException("job " + jobId + ": multicast groups must be in 1..65535, got "
                    + group);
            }
        }
        if (multicastGroup == flushGroup)
        {
            throw new IllegalArgumentException("job " + jobId + ": the flush group must differ from the result group");
        }
        toEsaJobConfig(jobId, window, lanes, priority, totalBytes, workers, server); // the record's own checks
    }

    public int workerCount()
    {
        return workers.size();
    }

    /** The job table row of an {@link EsaSwitch}, with every worker's and the server's peer. */
    public EsaJobConfig toEsaJobConfig()
    {
        return toEsaJobConfig(jobId, window, lanes, priority, totalBytes, workers, server);
    }

    /** The priority the switch's job table holds under {@code policy} at setup. */
    public int tablePriority(final PriorityPolicy policy)
    {
        return policy == PriorityPolicy.SHORTEST_REMAINING_FIRST ? EsaSwitch.srfPriority(totalBytes) : priority;
    }

    private static EsaJobConfig toEsaJobConfig(
        final int jobId, final int window, final int lanes, final int priority, final long totalBytes,
        final List<WorkerEndpoint> workers, final WorkerEndpoint server)
    {
        final int[] peers = workers.stream().mapToInt(WorkerEndpoint::peer).toArray();
        return new EsaJobConfig(jobId, workers.size(), lanes, window, priority, peers, server.peer(), totalBytes,
            JobSpec.joinCredentials(workers));
    }
}
