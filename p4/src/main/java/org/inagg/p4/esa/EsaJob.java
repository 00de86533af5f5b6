package org.inagg.p4.esa;

import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.pipeline.NodeJob;

/** A job of the ESA switch: its configuration and its workers' peers (its blocks live in the shared pool). */
final class EsaJob extends NodeJob
{
    final EsaJobConfig config;
    final int[] peers;

    EsaJob(final EsaJobConfig config)
    {
        super(new JobMembership(config.jobId(), config.workers(), config.workerPeers(), config.joinCredentials(), 0,
            true));
        this.config = config;
        this.peers = config.workerPeers();
    }

    @Override
    public int joinSlots()
    {
        return config.window();
    }

    @Override
    public int joinLanes()
    {
        return config.lanesPerPacket();
    }

    @Override
    public String describe()
    {
        return config.toString();
    }
}
