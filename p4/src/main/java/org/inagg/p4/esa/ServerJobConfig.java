package org.inagg.p4.esa;

import java.util.Arrays;

/**
 * A job as its parameter server knows it.
 *
 * @param jobId            job id.
 * @param workers          workers whose contributions complete a block.
 * @param workerPeers      each worker's peer in the server's transport.
 * @param switchPeer       the switch, in the server's transport.
 * @param resultsViaSwitch ATP: results go to the switch, which frees the aggregator and multicasts them; ESA: results
 *                         go straight to the workers.
 */
public record ServerJobConfig(int jobId, int workers, int[] workerPeers, int switchPeer, boolean resultsViaSwitch)
{
    public ServerJobConfig
    {
        if (workers < 1 || workerPeers == null || workerPeers.length != workers)
        {
            throw new IllegalArgumentException("job " + jobId + ": needs one peer per worker");
        }
        workerPeers = workerPeers.clone();
    }

    @Override
    public int[] workerPeers()
    {
        return workerPeers.clone();
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof ServerJobConfig c && jobId == c.jobId && workers == c.workers
            && Arrays.equals(workerPeers, c.workerPeers) && switchPeer == c.switchPeer
            && resultsViaSwitch == c.resultsViaSwitch;
    }

    @Override
    public int hashCode()
    {
        return 31 * jobId + Arrays.hashCode(workerPeers);
    }

    @Override
    public String toString()
    {
        return "ServerJobConfig[jobId=" + jobId + ", workers=" + workers + ", workerPeers="
            + Arrays.toString(workerPeers) + ", switchPeer=" + switchPeer + ", resultsViaSwitch=" + resultsViaSwitch
            + "]";
    }
}
