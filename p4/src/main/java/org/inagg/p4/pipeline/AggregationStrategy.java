package org.inagg.p4.pipeline;

import java.lang.foreign.MemorySegment;

/**
 * What differs between the switch-side nodes, behind the {@link AggregationNode}'s shared drain, parse, job table and
 * JOIN handling: which messages the node takes, and what it does with one of an installed job. Called on the node's
 * agent thread only; {@link #aggregate} is the hot path (no allocation, locks, logging or exceptions).
 *
 * @param <J> the strategy's job.
 */
public interface AggregationStrategy<J extends NodeJob>
{
    /**
     * Checks before the job table: the node counter to drop the message with (the message type or a flag the node
     * does not take), or null to look its job up and {@link #aggregate} it.
     */
    NodeCounter parse(MemorySegment m, long o, int type);

    /** A message {@link #parse} passed, of an installed job. */
    void aggregate(J job, MemorySegment m, long o, int length, int peer);

    /** {@code job} was installed, replacing {@code previous} (null if none). */
    void installed(J job, J previous);

    /** {@code job} was removed. */
    void removed(J job);

    /** A worker's rejoin started a new session of {@code job}: its aggregation state starts afresh. */
    void sessionStarted(J job);
}
