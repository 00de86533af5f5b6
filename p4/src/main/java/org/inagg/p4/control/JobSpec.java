package org.inagg.p4.control;

import java.util.Arrays;
import java.util.List;

import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.p4.softswitch.UpstreamAggregation;

/**
 * One job as the control plane configures it on a switch.
 *
 * @param jobId          job id carried in every packet.
 * @param slots          aggregator slots of the job (each with two shadow copies).
 * @param slotBase       first slot of the job in the switch's shared register pool.
 * @param lanes          int32 lanes per packet.
 * @param multicastGroup the job's multicast group (1..65535): one replica per worker, replication id = worker id;
 *                       0 ({@link SwitchJobConfig#NO_MULTICAST_GROUP}) for an upstream job, which multicasts nothing.
 * @param workers        the registered endpoint of each worker id, in worker id order; their count is the job's W.
 * @param upstream       null, or two-level aggregation: the switch sums only {@link Upstream#localWorkers()} and sends
 *                       the sum to {@link Upstream#server()} ({@link UpstreamAggregation}).
 * @param session        the job's session (0..65535, docs/sessions.md): the job table row carries it and the switch
 *                       aggregates only packets of it; installing the job again with the next one starts a new run.
 */
public record JobSpec(
    int jobId, int slots, int slotBase, int lanes, int multicastGroup, List<WorkerEndpoint> workers, Upstream upstream,
    int session)
{
    /**
     * Two-level aggregation of a job on this switch ({@link UpstreamAggregation}).
     *
     * @param server       the job's parameter server: its switch port and addresses (egress {@code server_endpoint}).
     * @param localWorkers the worker ids this switch serves, distinct, each below the job's W.
     */
    public record Upstream(WorkerEndpoint server, int[] localWorkers)
    {
        public Upstream
        {
            if (server == null)
            {
                throw new IllegalArgumentException("an upstream job needs a parameter server");
            }
            // distinct ids >= 0, at least one; sorted
            localWorkers = new UpstreamAggregation(server.peer(), localWorkers).localWorkers();
        }

        @Override
        public int[] localWorkers()
        {
            return localWorkers.clone();
        }

        /** The local workers as 32-bit bitmap words (bit w % 32 of word w / 32), {@code words} of them. */
        public int[] bitmapWords(final int words)
        {
            final int[] bitmap = new int[words];
            for (final int worker : localWorkers)
            {
                bitmap[worker >>> 5] |= 1 << (worker & 31);
            }
            return bitmap;
        }

        public UpstreamAggregation toUpstreamAggregation()
        {
            return new UpstreamAggregation(server.peer(), localWorkers);
        }

        @Override
        public boolean equals(final Object o)
        {
            return o instanceof Upstream u && server.equals(u.server) && Arrays.equals(localWorkers, u.localWorkers);
        }

        @Override
        public int hashCode()
        {
            return 31 * server.hashCode() + Arrays.hashCode(localWorkers);
        }

        @Override
        public String toString()
        {
            return "Upstream[server=" + server + ", localWorkers=" + Arrays.toString(localWorkers) + "]";
        }
    }

    /** A job in session 0. */
    public JobSpec(
        final int jobId, final int slots, final int slotBase, final int lanes, final int multicastGroup,
        final List<WorkerEndpoint> workers, final Upstream upstream)
    {
        this(jobId, slots, slotBase, lanes, multicastGroup, workers, upstream, 0);
    }

    /** This job in session {@code next}. */
    public JobSpec withSession(final int next)
    {
        return new JobSpec(jobId, slots, slotBase, lanes, multicastGroup, workers, upstream, next);
    }

    /** A job whose results are multicast to its workers (no upstream). */
    public JobSpec(
        final int jobId, final int slots, final int slotBase, final int lanes, final int multicastGroup,
        final List<WorkerEndpoint> workers)
    {
        this(jobId, slots, slotBase, lanes, multicastGroup, workers, null);
    }

    /** An upstream job (no multicast group): the switch sums {@code localWorkers} and sends the sum to the server. */
    public static JobSpec upstream(
        final int jobId, final int slots, final int slotBase, final int lanes, final List<WorkerEndpoint> workers,
        final WorkerEndpoint server, final int... localWorkers)
    {
        return new JobSpec(jobId, slots, slotBase, lanes, SwitchJobConfig.NO_MULTICAST_GROUP, workers,
            new Upstream(server, localWorkers));
    }

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
        if (upstream == null && (multicastGroup < 1 || multicastGroup > 0xFFFF))
        {
            throw new IllegalArgumentException("job " + jobId + ": multicast group must be in 1..65535, got "
                + multicastGroup);
        }
        if (upstream != null)
        {
            if (multicastGroup != SwitchJobConfig.NO_MULTICAST_GROUP)
            {
                throw new IllegalArgumentException("job " + jobId + ": an upstream job multicasts nothing; its"
                    + " multicast group must be 0, got " + multicastGroup);
            }
            final int[] local = upstream.localWorkers();
            if (local[local.length - 1] >= workers.size())
            {
                throw new IllegalArgumentException("job " + jobId + ": local worker " + local[local.length - 1]
                    + " is not a worker id of a job of " + workers.size() + " workers");
            }
        }
        toSwitchJobConfig(jobId, slots, slotBase, lanes, multicastGroup, workers, session); // the record's checks
    }

    public int workerCount()
    {
        return workers.size();
    }

    public boolean isUpstream()
    {
        return upstream != null;
    }

    /** Fresh contributions that complete a round on this switch: W, or the number of local workers. */
    public int contributors()
    {
        return upstream == null ? workers.size() : upstream.localWorkers().length;
    }

    /** The job table row of a software switch, with every worker's peer registered. */
    public SwitchJobConfig toSwitchJobConfig()
    {
        return toSwitchJobConfig(jobId, slots, slotBase, lanes, multicastGroup, workers, session);
    }

    private static SwitchJobConfig toSwitchJobConfig(
        final int jobId, final int slots, final int slotBase, final int lanes, final int multicastGroup,
        final List<WorkerEndpoint> workers, final int session)
    {
        final int[] peers = workers.stream().mapToInt(WorkerEndpoint::peer).toArray();
        return new SwitchJobConfig(jobId, workers.size(), slots, lanes, slotBase, multicastGroup, peers, session,
            joinCredentials(workers));
    }

    /** The workers' JOIN credentials, or null when none requires one. */
    static long[] joinCredentials(final List<WorkerEndpoint> workers)
    {
        final long[] credentials = workers.stream().mapToLong(WorkerEndpoint::joinCredential).toArray();
        for (final long credential : credentials)
        {
            if (credential != org.inagg.wire.InaggHeader.NO_CREDENTIAL)
            {
                return credentials;
            }
        }
        return null;
    }
}
