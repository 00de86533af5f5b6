package org.inagg.p4.softswitch;

import java.util.Arrays;

/**
 * Two-level aggregation for one job on one switch: the switch sums only the workers it serves and, instead of
 * multicasting that sum, sends it up to the job's parameter server as a PARTIAL
 * ({@link org.inagg.p4.esa.EsaWire#TYPE_PARTIAL}, reason {@link org.inagg.p4.esa.EsaWire#REASON_SUBTREE}) carrying the
 * bitmap of those workers. The server ({@link org.inagg.p4.esa.ParameterServer}) adds the partials of every switch and
 * the raw contributions of the workers it serves itself, and sends the result to every worker. This is how a GRID or
 * InArt plan (module {@code control}) places aggregation: several switches each summing their share of the workers,
 * one PS per model shard.
 * <pre>
 *   worker 0 ─┐                         worker 4 ─┐
 *   worker 1 ─┼─ switch S1 ─ PARTIAL ─┐ worker 5 ─┴─ switch S2 ─ PARTIAL ─┐
 *   worker 2 ─┤   (sums 0..3)         ├──────────────────────────────────┴─ PS ── RESULT to workers 0..7
 *   worker 3 ─┘                       │                   worker 6, 7 ── raw ─┘
 * </pre>
 * Loss anywhere is repaired by the workers' retransmissions alone: a retransmission that finds the switch's round
 * already complete (so the PARTIAL, or the server's result, was lost) goes to the server raw; the server adds it if
 * that worker's bit is clear, answers it from its retained results if the block is complete, and never adds a worker
 * twice (bitmaps), so the sum is exact whatever was lost, duplicated or reordered.
 * <p>
 * <b>Results down the tree</b> ({@code resultsDown}): the switch marks its PARTIALs with
 * {@link org.inagg.p4.esa.EsaWire#FLAG_RESULTS_DOWN}, and the server sends the round's result once to it rather than
 * once to each of its workers; the switch takes a RESULT of the job only from {@code parameterServerPeer} and of the
 * job's session, and multicasts it to its local workers as a one-level switch multicasts its own (a REDUCE_SCATTER
 * round's lanes to the Owner only). It keeps nothing of it: if it is lost, the workers retransmit, their
 * retransmissions of the round (complete here) go up raw, and the server answers each of them directly. With it off
 * (the P4 programs' way, byte for byte) the server answers every worker itself.
 *
 * @param parameterServerPeer the job's parameter server, in the switch's transport.
 * @param localWorkers        worker ids (in {@code 0..workers-1} of the job) this switch serves; the switch drops
 *                            the others' packets and refuses their JOINs.
 * @param resultsDown         whether the server sends the round's result once to this switch, which multicasts it
 *                            to its local workers.
 */
public record UpstreamAggregation(int parameterServerPeer, int[] localWorkers, boolean resultsDown)
{
    /** Results straight from the server to every worker, as the P4 programs' PARTIALs ask for. */
    public UpstreamAggregation(final int parameterServerPeer, final int[] localWorkers)
    {
        this(parameterServerPeer, localWorkers, false);
    }

    public UpstreamAggregation
    {
        if (parameterServerPeer < 0)
        {
            throw new IllegalArgumentException("parameter server peer must be >= 0, got " + parameterServerPeer);
        }
        if (localWorkers == null || localWorkers.length == 0)
        {
            throw new IllegalArgumentException("an upstream aggregation needs at least one local worker");
        }
        localWorkers = localWorkers.clone();
        Arrays.sort(localWorkers);
        for (int i = 0; i < localWorkers.length; i++)
        {
            if (localWorkers[i] < 0 || (i > 0 && localWorkers[i] == localWorkers[i - 1]))
            {
                throw new IllegalArgumentException("local workers must be distinct ids >= 0, got "
                    + Arrays.toString(localWorkers));
            }
        }
    }

    @Override
    public int[] localWorkers()
    {
        return localWorkers.clone();
    }

    /** Throws unless every local worker is a worker id of a job of {@code workers} workers. */
    void requireWithin(final int jobId, final int workers)
    {
        final int highest = localWorkers[localWorkers.length - 1];
        if (highest >= workers)
        {
            throw new IllegalArgumentException("job " + jobId + ": local worker " + highest
                + " is not a worker id of a job of " + workers + " workers");
        }
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof UpstreamAggregation u && parameterServerPeer == u.parameterServerPeer
            && Arrays.equals(localWorkers, u.localWorkers) && resultsDown == u.resultsDown;
    }

    @Override
    public int hashCode()
    {
        return 31 * (31 * parameterServerPeer + Arrays.hashCode(localWorkers)) + Boolean.hashCode(resultsDown);
    }

    @Override
    public String toString()
    {
        return "UpstreamAggregation[parameterServerPeer=" + parameterServerPeer + ", localWorkers="
            + Arrays.toString(localWorkers) + ", resultsDown=" + resultsDown + "]";
    }
}
