package org.inagg.p4.softswitch;

import java.lang.foreign.MemorySegment;

/**
 * Where a slot job's complete round goes: to its workers ({@link ResultMulticast}), or up to the job's parameter
 * server ({@link UpstreamForwarding}, two-level aggregation, which may relay the server's result back down). The {@link SlotAggregation} pipeline is the same either
 * way; the output decorates its decision. Agent thread only, no allocation.
 */
interface RoundOutput
{
    /** The W-th (or, two-level, the local workers') fresh contribution completed the round in {@code copyIndex}. */
    void complete(SlotJob job, int copyIndex, MemorySegment m, long o, int owner);

    /** A packet of a complete round (its sender lost the result, or a slower worker's copy). */
    void completedAgain(SlotJob job, int copyIndex, MemorySegment m, long o, int length, int worker, int owner);

    /** Whether the job takes RESULTs from its parameter server, to relay to its workers ({@link #fromServer}). */
    boolean relaysResults();

    /** A RESULT of the job (an AGGREGATE with FLAG_RESULT) from {@code peer}: relayed down, or dropped and counted. */
    void fromServer(SlotJob job, MemorySegment m, long o, int length, int peer);
}
