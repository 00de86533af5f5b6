package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * What the controller installs on a switch for one job: the job table row and each worker id's registered source.
 *
 * @param jobId    job id carried in every packet.
 * @param slots    the job's slots...
 * @param slotBase ...starting here in the switch's shared register pool.
 * @param lanes    int32 lanes per packet.
 * @param session  the job's session (1..65535).
 * @param sources  the UDP source of each worker id, in worker id order (their count is W).
 */
public record JobProgram(int jobId, int slots, int slotBase, int lanes, int session, List<InetSocketAddress> sources)
{
    public JobProgram
    {
        sources = List.copyOf(sources);
    }

    public int workers()
    {
        return sources.size();
    }
}
