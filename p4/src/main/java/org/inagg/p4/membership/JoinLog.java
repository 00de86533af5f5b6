package org.inagg.p4.membership;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.inagg.transport.Transport;
import org.inagg.wire.RejectReason;

/**
 * The lifecycle lines of a node that answers JOINs (the software switch, the ESA switch, the parameter server), through
 * {@link System.Logger}: one per job installed, one per worker joining from a source it was not joined from. Refused
 * JOINs (REJECTs, JOINs from a source that is not the worker's, JOINs without the worker's credential) are logged at
 * most once a second per cause (each REJECT reason, a wrong source, a wrong credential), the line saying how many of
 * that cause were not logged since the last: a flood of bad JOINs, alternating or not, costs a line a second per cause,
 * and the suppressed ones cost a counter increment (no allocation). Agent thread only.
 */
public final class JoinLog
{
    /** Lines of one cause of refusal: at most one per this interval. */
    public static final long REFUSAL_INTERVAL_NS = TimeUnit.SECONDS.toNanos(1);

    private static final long NONE = Long.MIN_VALUE;
    /** Causes of refusal: REJECT reasons 1..4 at their number, any other reason at 5, then these. */
    private static final int OTHER_REJECT = 5;
    private static final int SPOOFED = 6;
    private static final int BAD_CREDENTIAL = 7;
    private static final int CAUSES = 8;

    private final System.Logger logger;
    private final String node;
    private final Transport transport;
    private final NanoClock clock;
    /** (job id &lt;&lt; 16 | worker id) to the peer the worker was last logged joining from. */
    private final Long2LongHashMap joinedFrom = new Long2LongHashMap(NONE);
    private final long[] lastLineNs = new long[CAUSES];
    private final long[] suppressed = new long[CAUSES];

    /**
     * @param node      how the lines name the node: "switch", "esa switch", "parameter server".
     * @param transport what describes the peers (their addresses).
     */
    public JoinLog(final Class<?> source, final String node, final Transport transport)
    {
        this(source, node, transport, SystemNanoClock.INSTANCE);
    }

    /** As {@link #JoinLog(Class, String, Transport)}, timing the refusal lines by {@code clock}. */
    public JoinLog(final Class<?> source, final String node, final Transport transport, final NanoClock clock)
    {
        this.logger = System.getLogger(source.getName());
        this.node = node;
        this.transport = transport;
        this.clock = clock;
        Arrays.fill(lastLineNs, NONE);
    }

    /**
     * Whether a line of {@code cause} is due now; if not, it is counted as suppressed. Returns the count of those
     * suppressed since the last line (the caller's line says it), or -1 when no line is due.
     */
    private long due(final int cause)
    {
        final long nowNs = clock.nanoTime();
        if (lastLineNs[cause] != NONE && nowNs - lastLineNs[cause] < REFUSAL_INTERVAL_NS)
        {
            suppressed[cause]++;
            return -1;
        }
        lastLineNs[cause] = nowNs;
        final long before = suppressed[cause];
        suppressed[cause] = 0;
        return before;
    }

    private static String suppressedNote(final long suppressed)
    {
        return suppressed == 0 ? "" : " (" + suppressed + " more like it since the last such line, not logged)";
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

    /** A JOIN was refused with REJECT {@code reason}; logged at most once a second per reason. */
    public void rejected(final int jobId, final int workerId, final int workers, final int reason, final int peer)
    {
        final long suppressedBefore = due(reason >= 1 && reason < OTHER_REJECT ? reason : OTHER_REJECT);
        if (suppressedBefore < 0)
        {
            return;
        }
        final String from = transport.describePeer(peer);
        logger.log(Level.WARNING, () -> node + ": job " + jobId + " worker " + workerId + " (of " + workers
            + " workers) from " + from + " rejected: " + RejectReason.describe(reason)
            + suppressedNote(suppressedBefore));
    }

    /**
     * A JOIN was dropped unanswered because it did not come from the worker's registered source; logged at most once
     * a second.
     */
    public void spoofed(final int jobId, final int workerId, final int peer)
    {
        final long suppressedBefore = due(SPOOFED);
        if (suppressedBefore < 0)
        {
            return;
        }
        final String from = transport.describePeer(peer);
        logger.log(Level.WARNING, () -> node + ": job " + jobId + " worker " + workerId + ": JOIN from " + from
            + " dropped unanswered: not the worker's registered source" + suppressedNote(suppressedBefore));
    }

    /**
     * A JOIN was dropped unanswered because it did not show the worker's JOIN credential (a forged or confused JOIN;
     * the job's session is untouched); logged at most once a second. The line never shows a credential.
     */
    public void badCredential(final int jobId, final int workerId, final int peer)
    {
        final long suppressedBefore = due(BAD_CREDENTIAL);
        if (suppressedBefore < 0)
        {
            return;
        }
        final String from = transport.describePeer(peer);
        logger.log(Level.WARNING, () -> node + ": job " + jobId + " worker " + workerId + ": JOIN from " + from
            + " dropped unanswered: it does not show the worker's JOIN credential (the session is unchanged)"
            + suppressedNote(suppressedBefore));
    }
}
