package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * What the controller installs on a switch for one job: the job table row, each worker id's registered source and
 * JOIN credential.
 *
 * @param jobId    job id carried in every packet.
 * @param slots    the job's slots...
 * @param slotBase ...starting here in the switch's shared register pool.
 * @param lanes    int32 lanes per packet.
 * @param session  the job's session (1..65535).
 * @param sources  the UDP source of each worker id, in worker id order (their count is W).
 * @param joinCredentials each worker id's JOIN credential (docs/security.md), or null: none required. A switch never
 *                 answers them back: a program read from a switch has null here, and {@link #equals} ignores them.
 */
public record JobProgram(int jobId, int slots, int slotBase, int lanes, int session, List<InetSocketAddress> sources,
    long[] joinCredentials)
{
    public JobProgram
    {
        sources = List.copyOf(sources);
        if (joinCredentials != null)
        {
            if (joinCredentials.length != sources.size())
            {
                throw new IllegalArgumentException("job " + jobId + ": " + joinCredentials.length
                    + " JOIN credentials for " + sources.size() + " workers");
            }
            joinCredentials = joinCredentials.clone();
        }
    }

    /** A program without JOIN credentials (as a switch describes what it holds). */
    public JobProgram(final int jobId, final int slots, final int slotBase, final int lanes, final int session,
        final List<InetSocketAddress> sources)
    {
        this(jobId, slots, slotBase, lanes, session, sources, null);
    }

    @Override
    public long[] joinCredentials()
    {
        return joinCredentials == null ? null : joinCredentials.clone();
    }

    /** The same row and sources; the credentials are not compared (a switch does not tell them). */
    @Override
    public boolean equals(final Object o)
    {
        return o instanceof JobProgram p && jobId == p.jobId && slots == p.slots && slotBase == p.slotBase
            && lanes == p.lanes && session == p.session && sources.equals(p.sources);
    }

    @Override
    public int hashCode()
    {
        return 31 * jobId + sources.hashCode();
    }

    @Override
    public String toString()
    {
        return "JobProgram[jobId=" + jobId + ", slots=" + slots + ", slotBase=" + slotBase + ", lanes=" + lanes
            + ", session=" + session + ", sources=" + sources + ", joinCredentials="
            + (joinCredentials == null ? "none" : "given") + "]";
    }

    public int workers()
    {
        return sources.size();
    }
}
