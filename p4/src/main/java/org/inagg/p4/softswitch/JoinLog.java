package org.inagg.p4.softswitch;

import java.lang.System.Logger.Level;

import org.agrona.collections.Long2LongHashMap;
import org.inagg.transport.Transport;
import org.inagg.wire.RejectReason;

/**
 * The lifecycle lines of a node that answers JOINs (the software switch, the ESA switch, the parameter server), through
 * {@link System.Logger}: one per job installed, one per worker joining from a source it was not joined from, one per
 * rejection that differs from the one before. Never one per packet: a worker's repeated JOINs and a flood of the same
 * bad JOIN log once. Agent thread only.
 */
public final class JoinLog
{
    private static final long NONE = Long.MIN_VALUE;

    private final System.Logger logger;
    private final String node;
    private final Transport transport;
    /** (job id &lt;&lt; 16 | worker id) to the peer the worker was last logged joining from. */
    private final Long2LongHashMap joinedFrom = new Long2LongHashMap(NONE);
    private long lastReject = NONE;

    /**
     * @param node      how the lines name the node: "switch", "esa switch", "parameter server".
     * @param transport what describes the peers (their addresses).
     */
    public JoinLog(final Class<?> source, final String node, final Transport transport)
    {
        this.logger = System.getLogger(source.getName());
        this.node = node;
        this.transport = transport;
    }

    /** A job was installed (or replaced); its workers' next JOINs log again. */
    public void jobInstalled(final int jobId, final String description)
    {
        joinedFrom.clear();
        logger.log(Level.INFO, () -> node + ": job " + jobId + " installed: " + description);
    }

    /**
     * A worker rejoined as a new incarnation, so the job's run it belonged to is over: session {@code session} starts
     * with that worker and the job's aggregation state is reset; every worker's next JOIN logs again.
     */
    public void sessionStarted(final int jobId, final int session, final int workerId, final int peer)
    {
        joinedFrom.clear();
        final String from = transport.describePeer(peer);
        logger.log(Level.WARNING, () -> node + ": job " + jobId + " session " + session + " started: worker "
            + workerId + " rejoined from " + from + " as a new process; the previous run is aborted and the job's"
            + " aggregation state reset");
    }

    /** A job was removed. */
    public void jobRemoved(final int jobId)
    {
        joinedFrom.clear();
        logger.log(Level.INFO, () -> node + ": job " + jobId + " removed");
    }

    /** A JOIN was accepted; logged when the worker had not joined from {@code peer} before. */
    public void joined(final int jobId, final int workerId, final int workers, final int peer)
    {
        final long key = (long)jobId << 16 | workerId;
        final long previous = joinedFrom.put(key, peer);
        if (previous == peer)
        {
            return;
        }
        final String from = transport.describePeer(peer);
        final String before = previous == NONE ? "" : " (before from " + transport.describePeer((int)previous) + ")";
        logger.log(Level.INFO, () -> node + ": job " + jobId + " worker " + workerId + "/" + workers + " joined from "
            + from + before);
    }

    /** A JOIN was refused with REJECT {@code reason}; logged unless it repeats the rejection logged last. */
    public void rejected(final int jobId, final int workerId, final int workers, final int reason, final int peer)
    {
        final long key = (long)jobId << 48 | (long)workerId << 32 | (long)(reason & 0xFF) << 24 | (peer & 0xFFFFFF);
        if (key == lastReject)
        {
            return;
        }
        lastReject = key;
        final String from = transport.describePeer(peer);
        logger.log(Level.WARNING, () -> node + ": job " + jobId + " worker " + workerId + " (of " + workers
            + " workers) from " + from + " rejected: " + RejectReason.describe(reason));
    }

    /** A JOIN was dropped unanswered because it did not come from the worker's registered source. */
    public void spoofed(final int jobId, final int workerId, final int peer)
    {
        final long key = (long)jobId << 48 | (long)workerId << 32 | 0xFFL << 24 | (peer & 0xFFFFFF);
        if (key == lastReject)
        {
            return;
        }
        lastReject = key;
        final String from = transport.describePeer(peer);
        logger.log(Level.WARNING, () -> node + ": job " + jobId + " worker " + workerId + ": JOIN from " + from
            + " dropped unanswered: not the worker's registered source");
    }
}
