package org.inagg.services.agent;

/**
 * A rank's hello: who it is in which job, as torch told it.
 *
 * @param version        the rank's {@link AgentProtocol#VERSION}.
 * @param rank           global rank.
 * @param worldSize      ranks in the job.
 * @param localRank      rank among the job's ranks on this host.
 * @param localWorldSize the job's ranks on this host.
 * @param hostIndex      this host's index among the job's hosts (the switch job's worker id).
 * @param hosts          hosts of the job.
 * @param switchJob      the switch job id when {@code hosts > 1}.
 * @param pid            the rank's process id, for messages.
 * @param jobKey         the job's identity, the same on every rank.
 * @param collectiveTimeoutMs how long the agent may wait for the other local ranks of a round once one rang; 0: the
 *                       agent's default ({@link HostAgentContext#collectiveTimeout()}).
 */
public record Hello(int version, int rank, int worldSize, int localRank, int localWorldSize, int hostIndex, int hosts,
    int switchJob, int pid, String jobKey, int collectiveTimeoutMs)
{
    @Override
    public String toString()
    {
        return "rank " + rank + "/" + worldSize + " (local " + localRank + "/" + localWorldSize + ", host "
            + hostIndex + "/" + hosts + ", pid " + pid + ") of job " + jobKey;
    }
}
