package org.inagg.services.agent;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A round's work on the agent's side once every local rank rang for it, staged in chunks so that the ranks' copies,
 * the in-host sum and the switch stage overlap:
 * <pre>
 *   ranks copy in      | c0 | c1 | c2 | c3 |
 *   agent sums              |c0|  |c1|  |c2|  |c3|
 *   switch stage               |   c0   |   c1   |   c2   |   c3   |
 *   ranks copy out                      | c0 |     | c1 |     | c2 |     | c3 |
 * </pre>
 * The ranks say how much of the round they copied in (their ready counts, {@link SharedRegion}); the agent sums the
 * elements every rank holds as they come ({@link #advance}). With network chunks ({@code networkChunkElements} not 0)
 * it hands each to the switch stage once it is summed, while the next is still being copied and summed, and the ranks
 * copy each out as it comes back; the switch job runs the chunks one after another in that order, and drains the
 * links between two (which is why network chunks are off by default, {@link HostAgentContext#networkChunkBytes}).
 * Without them the round goes through the switch whole once its last chunk is summed. A chunk starts on a packet boundary of its round: every block (one packet's lanes, the unit of the
 * fixed-point exponents, {@link org.inagg.fixedpoint.FixedPoint}) is the same as in the whole round's stage, and a
 * round split into parts (a reduce-scatter) is cut into whole parts, or into packet-aligned pieces of one part, so the
 * results are bit-identical to the unchunked round's. The in-host sum of an element is the same whatever chunk it is
 * in (the ranks' order is fixed).
 * <p>
 * The NaN promise stays: a NaN or infinity in any rank's tensor leaves every rank's tensor untouched and fails the
 * round on every rank; on one host the job stays usable, across hosts the job fails ({@link #finishIfQuiet}). Nothing of the result is published for copying out ({@link Outcome#done}) before the whole
 * in-host sum is known to be finite; across hosts that costs nothing, since the sum is done long before the first
 * chunk comes back from the switch. On one host the ranks copy out after the whole sum (the overlap there is the copy
 * in with the sum). A chunk already on the network when a later chunk's NaN is found still completes (the other hosts
 * send it too) before the round fails, so that no late result lands in the next round's buffer. A switch stage that
 * fails fails the job, possibly after the ranks copied some chunks out.
 * <p>
 * Rounds that are not sums (GATHER, MIN, MAX), and every round when chunks are off ({@code chunkElements} 0), are one
 * chunk: copied in whole, then reduced, then staged, then copied out, as before chunks existed.
 * <p>
 * Runs on the agent's thread only; the switch stage's completions are posted back to it.
 */
final class RoundPipeline
{
    /** What the pipeline tells its job. */
    interface Outcome
    {
        /** The first {@code elements} of the round's result are final: the ranks may copy them out. */
        void done(long elements);

        /** The round ended, {@link AgentProtocol#OK} or a round error; the job stays usable. */
        void complete(int status, String message);

        /** The switch stage failed: the job fails. */
        void failJob(int status, String message);
    }

    /** The switch stage as the pipeline uses it ({@link NetworkStage}). */
    interface SwitchStage
    {
        /** Stages the chunk {@code chunk} that starts {@code at} elements into {@code data}, in place. */
        CompletableFuture<Void> stage(MemorySegment data, long at, CollectiveRequest chunk, int ranksPerHost);

        /** Lanes per packet of the switch job; 0 while unknown ({@link #joined}) or when the job failed to open. */
        int lanes();

        /** Completes once the switch job is joined ({@link #lanes} known) or failed to open. */
        CompletableFuture<?> joined();
    }

    private final MemorySegment[] inputs;
    private final MemorySegment result;
    private final RankConnection[] members;
    private final InHostReducer reducer;
    private final SwitchStage network;
    private final Consumer<Runnable> post;
    private final Outcome outcome;
    private final int worldSize;
    private final int ranksPerHost;
    private final long chunkElements;
    private final long networkChunkElements;

    private CollectiveRequest round;
    /** The round is copied in and summed in chunks. */
    private boolean chunked;
    /** The round goes through the switch in network chunks (a sum, with network chunks on, whatever {@link #chunked}). */
    private boolean networkChunked;
    /** Elements every local rank has copied in. */
    private long available;
    /** Elements of the in-host result computed. */
    private long summed;
    /** Elements handed to the switch stage. */
    private long sent;
    /** Elements back from the switch stage, in order. */
    private long landed;
    private long published;
    private int inFlight;
    /** A callback waits for the switch job's join to stage network chunks ({@link #stageSummed}). */
    private boolean awaitingJoin;
    private boolean finite;
    private String nonFiniteMessage;

    /**
     * @param network       the switch stage, null on one host.
     * @param ranksPerHost  consecutive ranks per host (what parts need), 0 when hosts differ.
     * @param chunkElements elements of the chunks the ranks copy in and the agent sums; 0: whole rounds.
     * @param networkChunkElements elements of a network chunk (rounded to whole packets or parts); 0: the round whole,
     *                             once summed.
     */
    RoundPipeline(final MemorySegment[] inputs, final MemorySegment result, final RankConnection[] members,
        final InHostReducer reducer, final SwitchStage network, final Consumer<Runnable> post, final Outcome outcome,
        final int worldSize, final int ranksPerHost, final long chunkElements, final long networkChunkElements)
    {
        this.inputs = inputs;
        this.result = result;
        this.members = members;
        this.reducer = reducer;
        this.network = network;
        this.post = post;
        this.outcome = outcome;
        this.worldSize = worldSize;
        this.ranksPerHost = ranksPerHost;
        this.chunkElements = chunkElements;
        this.networkChunkElements = networkChunkElements;
    }

    /** Whether a round is in progress. */
    boolean active()
    {
        return round != null;
    }

    /** Whether the round in progress still waits for local ranks to copy in. */
    boolean awaitingRanks()
    {
        return round != null && available < round.count();
    }

    /** Starts {@code first}'s round (every local rank rang for it, with the same request). */
    void begin(final CollectiveRequest first)
    {
        round = first;
        final boolean sum = first.op() == AgentProtocol.OP_SUM || first.op() == AgentProtocol.OP_AVG;
        chunked = sum && chunkElements > 0;
        networkChunked = sum && networkChunkElements > 0;
        available = 0;
        summed = 0;
        sent = 0;
        landed = 0;
        published = 0;
        inFlight = 0;
        finite = true;
        nonFiniteMessage = null;
    }

    /** Drops the round in progress (the job failed); completions still on their way are ignored. */
    void abandon()
    {
        round = null;
    }

    /** Every local rank has copied at least {@code ready} elements of the round in: sums them and stages them. */
    void advance(final long ready)
    {
        final CollectiveRequest r = round;
        if (r == null)
        {
            return;
        }
        if (r.count() == 0)
        {
            // An empty round: nothing to copy, sum or send.
            round = null;
            outcome.complete(AgentProtocol.OK, null);
            return;
        }
        if (ready <= available)
        {
            return;
        }
        available = ready;
        if (!finite)
        {
            finishIfQuiet(r);
            return;
        }
        if (chunked)
        {
            final int divisor = r.op() == AgentProtocol.OP_AVG && network == null ? worldSize : 1;
            finite = reducer.reduce(inputs, result, summed, ready, r.dtype(), divisor);
            summed = ready;
        }
        else if (ready == r.count())
        {
            finite = reduceWhole(r);
            summed = ready;
        }
        if (!finite)
        {
            finishIfQuiet(r);
            return;
        }
        if (network == null)
        {
            if (summed == r.count())
            {
                outcome.complete(AgentProtocol.OK, null);
                round = null;
            }
            return;
        }
        stageSummed(r);
        publish(r);
    }

    /** GATHER, MIN and MAX, and sums with chunks off: the whole round at once. */
    private boolean reduceWhole(final CollectiveRequest r)
    {
        if (r.op() == AgentProtocol.OP_GATHER)
        {
            gather(r);
            return true;
        }
        if (r.op() == AgentProtocol.OP_MIN || r.op() == AgentProtocol.OP_MAX)
        {
            if (!InHostExtremes.reduce(inputs, result, r.count(), r.dtype(), r.op() == AgentProtocol.OP_MAX))
            {
                nonFiniteMessage = nanMessage(r);
                return false;
            }
            return true;
        }
        final int divisor = r.op() == AgentProtocol.OP_AVG && network == null ? worldSize : 1;
        return reducer.reduce(inputs, result, 0, r.count(), r.dtype(), divisor);
    }

    /**
     * A gather round: each local rank's range of its data region into the result at the same offsets. Over several
     * hosts, without parts, the rest of the result is zero and the switch's exact int32 sum fills in the other hosts'
     * ranges (they give disjoint ones, zeros elsewhere); with parts the switch's ALL_GATHER fills them in.
     */
    private void gather(final CollectiveRequest first)
    {
        if (network != null && first.partElements() == 0)
        {
            result.asSlice(0, first.count() * AgentProtocol.elementBytes(first.dtype())).fill((byte)0);
        }
        for (int i = 0; i < members.length; i++)
        {
            final CollectiveRequest request = members[i].pending;
            if (request.gatherLength() > 0)
            {
                MemorySegment.copy(inputs[i], request.gatherFrom(), result, request.gatherFrom(),
                    request.gatherLength());
            }
        }
    }

    /**
     * Hands every whole network chunk of what is summed to the switch stage. Network chunks are cut in whole packets,
     * so not before the switch job is joined (its lanes known): every host must cut the round the same way, whenever
     * its own join completed, or the hosts' packets would not match (a round staged whole on a host that was still
     * joining against chunks on one that had joined stalled the job, the clean-clone CI found).
     */
    private void stageSummed(final CollectiveRequest r)
    {
        if (networkChunked && network.lanes() == 0 && !network.joined().isDone())
        {
            if (!awaitingJoin)
            {
                awaitingJoin = true;
                network.joined().whenComplete((ignored, error) -> post.accept(this::onJoined));
            }
            return;
        }
        while (sent < summed)
        {
            final long end = chunkEnd(r, sent);
            if (end > summed)
            {
                return;
            }
            final long at = sent;
            final CollectiveRequest chunk = chunk(r, at, end);
            sent = end;
            inFlight++;
            network.stage(result, at, chunk, ranksPerHost).whenComplete((ignored, error) ->
                post.accept(() -> onLanded(r, at, end, error)));
        }
    }

    /** The switch job is joined (or failed to open): stages what the round in progress summed meanwhile. */
    private void onJoined()
    {
        awaitingJoin = false;
        final CollectiveRequest r = round;
        if (r != null && finite)
        {
            stageSummed(r);
        }
    }

    /** Where the network chunk that starts at {@code from} ends. */
    private long chunkEnd(final CollectiveRequest r, final long from)
    {
        return chunkEnd(r, from, networkChunked ? network.lanes() : 0, networkChunkElements);
    }

    /**
     * Where the network chunk of {@code r} that starts at {@code from} (0 or where the previous one ended) ends:
     * chunks of whole packets of {@code lanes}; with parts, whole parts, or pieces of whole packets of one part when a
     * part is larger than a chunk (a packet never straddles two parts, {@code BlockSchedule}). 0 lanes: one chunk.
     */
    static long chunkEnd(final CollectiveRequest r, final long from, final int lanes, final long chunkElements)
    {
        if (lanes == 0)
        {
            return r.count();
        }
        final long part = r.partElements();
        final long piece = Math.max(lanes, chunkElements / lanes * lanes);
        if (part == 0)
        {
            return Math.min(r.count(), from + piece);
        }
        if (part <= chunkElements)
        {
            return Math.min(r.count(), from + chunkElements / part * part);
        }
        return Math.min((from / part + 1) * part, from + piece);
    }

    /** The request the switch stage sees for elements {@code [from, to)} of {@code r}. */
    static CollectiveRequest chunk(final CollectiveRequest r, final long from, final long to)
    {
        if (from == 0 && to == r.count())
        {
            return r;
        }
        final long part = r.partElements();
        final long partElements = part == 0 ? 0 : Math.min(part, to - from);
        final int partRank = part == 0 ? 0 : r.partRank() + (int)(from / part);
        return new CollectiveRequest(r.sequence(), r.op(), r.dtype(), to - from, r.total(), 0, 0, partElements,
            partRank);
    }

    private void onLanded(final CollectiveRequest r, final long from, final long to, final Throwable error)
    {
        if (round != r)
        {
            return;
        }
        inFlight--;
        if (error != null)
        {
            round = null;
            final Throwable cause = error.getCause() != null ? error.getCause() : error;
            outcome.failJob(AgentProtocol.ERROR_NETWORK, "all-reduce #" + r.sequence()
                + " through the switch failed: " + cause.getMessage());
            return;
        }
        if (from != landed)
        {
            throw new IllegalStateException("switch stage of round #" + r.sequence() + " came back out of order: "
                + from + ".." + to + " after " + landed);
        }
        landed = to;
        if (r.op() == AgentProtocol.OP_AVG)
        {
            InHostReducer.range(new MemorySegment[] {result}, result, from, to, r.dtype(), worldSize);
        }
        if (!finite)
        {
            finishIfQuiet(r);
            return;
        }
        publish(r);
    }

    /** Tells the ranks how much of the result is final, once the whole in-host sum is known to be finite. */
    private void publish(final CollectiveRequest r)
    {
        if (summed != r.count() || landed == published)
        {
            return;
        }
        published = landed;
        if (landed == r.count())
        {
            round = null;
            outcome.complete(AgentProtocol.OK, null);
        }
        else
        {
            outcome.done(landed);
        }
    }

    /** Fails a round whose in-host stage was not finite once the ranks copied all in and nothing is on the network. */
    private void finishIfQuiet(final CollectiveRequest r)
    {
        if (available < r.count() || inFlight > 0)
        {
            return;
        }
        round = null;
        final String message = nonFiniteMessage != null ? nonFiniteMessage : nonFinite(r);
        if (network != null)
        {
            // Across hosts the others sent this round through the switch (they do not know of the NaN), and this
            // host did not, or not all of it: its next round would take this one's slots and sequences there and be
            // summed with the others' this round, silently. So the job fails here, and on the other hosts when their
            // round finds no contribution from this one (the peer timeout).
            outcome.failJob(AgentProtocol.ERROR_NETWORK, message + "; across hosts this ends the job (the other hosts"
                + " sent this round through the switch, which this host cannot match): create a new process group");
            return;
        }
        outcome.complete(AgentProtocol.ERROR_NON_FINITE, message);
    }

    private String nonFinite(final CollectiveRequest round)
    {
        // Cold path: find the first rank whose own input is not finite, to name it (nothing is on the network, the
        // result region is free to scribble on).
        for (int i = 0; i < inputs.length; i++)
        {
            if (!InHostReducer.range(new MemorySegment[] {inputs[i]}, result, 0, round.count(), round.dtype(), 1))
            {
                return "NaN or infinity in the float tensor of rank " + rank(i) + " in all-reduce #"
                    + round.sequence() + " (" + round.count() + " elements); nothing was summed";
            }
        }
        return "the sum overflowed to infinity in all-reduce #" + round.sequence() + " (" + round.count()
            + " elements): the inputs are finite but too large for float32";
    }

    private String nanMessage(final CollectiveRequest round)
    {
        // Cold path: name the first rank with a NaN.
        for (int i = 0; i < inputs.length; i++)
        {
            for (long e = 0; e < round.count(); e++)
            {
                if (Float.isNaN(inputs[i].getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, e)))
                {
                    return "NaN in the float tensor of rank " + rank(i) + " at element " + e + " of "
                        + describe(round) + " #" + round.sequence() + "; nothing was reduced";
                }
            }
        }
        return "NaN in " + describe(round) + " #" + round.sequence();
    }

    private int rank(final int localRank)
    {
        return members[localRank].identity.rank();
    }

    static String describe(final CollectiveRequest request)
    {
        if (request.op() == AgentProtocol.OP_MIN || request.op() == AgentProtocol.OP_MAX)
        {
            return (request.op() == AgentProtocol.OP_MIN ? "MIN" : "MAX") + " of "
                + (request.dtype() == AgentProtocol.DTYPE_FLOAT32 ? "float32" : "int32");
        }
        if (request.op() == AgentProtocol.OP_GATHER)
        {
            return "GATHER (all-gather or broadcast)";
        }
        return (request.op() == AgentProtocol.OP_SUM ? "SUM" : "AVG") + " of "
            + (request.dtype() == AgentProtocol.DTYPE_FLOAT32 ? "float32" : "int32");
    }
}
