package org.inagg.services.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/** The chunked round on a stand-in switch stage whose chunks complete when the test says. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoundPipelineTest
{
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;

    private final Arena arena = Arena.ofShared();
    private final InHostReducer reducer = new InHostReducer(2);
    private final Outcomes outcome = new Outcomes();
    private final Queue<Runnable> posted = new ArrayDeque<>();

    @AfterEach
    void close()
    {
        reducer.close();
        arena.close();
    }

    @Test
    void shouldSumEachChunkAsEveryRankHasItAndCompleteOneHostOnlyWhenAllIsSummedBitForBit()
    {
        final int n = (1 << 18) + 777; // the parallel path and a tail
        final MemorySegment[] inputs = inputs(3, n, 1);
        final MemorySegment result = arena.allocate(4L * n);
        final RoundPipeline pipeline = pipeline(inputs, result, null, 3, 1000);
        final CollectiveRequest round = new CollectiveRequest(1, AgentProtocol.OP_AVG, AgentProtocol.DTYPE_FLOAT32, n,
            n);
        pipeline.begin(round);
        for (final long ready : new long[] {0, 1000, 1001, 5000, 5000, 200_000, n - 1})
        {
            pipeline.advance(ready);
            assertThat(outcome.completed).as("after %d", ready).isEmpty();
            assertThat(pipeline.awaitingRanks()).isTrue();
        }
        pipeline.advance(n);
        assertThat(outcome.completed).containsExactly(AgentProtocol.OK);
        assertThat(outcome.done).isEmpty();
        assertThat(pipeline.active()).isFalse();
        final MemorySegment whole = arena.allocate(4L * n);
        InHostReducer.range(inputs, whole, 0, n, AgentProtocol.DTYPE_FLOAT32, 3);
        assertThat(result.mismatch(whole)).isEqualTo(-1);
    }

    @Test
    void shouldStageWholePacketChunksAsTheyAreSummedAndPublishThemOnlyOnceTheWholeSumIsFinite()
    {
        final int n = 1000;
        final MemorySegment[] inputs = inputs(2, n, 2);
        final MemorySegment result = arena.allocate(4L * n);
        final Switch network = new Switch(100);
        final RoundPipeline pipeline = pipeline(inputs, result, network, 4, 256);
        pipeline.begin(new CollectiveRequest(1, AgentProtocol.OP_AVG, AgentProtocol.DTYPE_FLOAT32, n, n));
        pipeline.advance(450);
        assertThat(network.ranges()).containsExactly("0..200", "200..400");
        network.land(0);
        drain();
        assertThat(outcome.done).as("nothing published before the whole sum is known finite").isEmpty();
        pipeline.advance(n);
        assertThat(network.ranges()).containsExactly("0..200", "200..400", "400..600", "600..800", "800..1000");
        assertThat(outcome.done).containsExactly(200L);
        for (int c = 1; c < 5; c++)
        {
            network.land(c);
            drain();
        }
        assertThat(outcome.done).containsExactly(200L, 400L, 600L, 800L);
        assertThat(outcome.completed).containsExactly(AgentProtocol.OK);
        // The stand-in switch leaves the in-host sum as it is: AVG over 4 ranks divides it by 4 after the stage.
        for (int i = 0; i < n; i++)
        {
            final float sum = inputs[0].getAtIndex(FLOAT, i) + inputs[1].getAtIndex(FLOAT, i);
            assertThat(result.getAtIndex(FLOAT, i)).isEqualTo(sum * 0.25f);
        }
    }

    @Test
    void shouldCutTheSameNetworkChunksWhileTheSwitchJobIsStillJoiningAsOnceItIsJoined()
    {
        // Two hosts of one job: one joined the switch before its first round, the other joins while its ranks copy
        // in. Both must cut the round into the same packets, or the switch never matches them (the job stalled).
        final int n = 1000;
        final Switch joinedFirst = new Switch(100);
        final RoundPipeline a = pipeline(inputs(2, n, 6), arena.allocate(4L * n), joinedFirst, 4, 256);
        final Switch joiningLate = new Switch(100, false);
        final RoundPipeline b = pipeline(inputs(2, n, 6), arena.allocate(4L * n), joiningLate, 4, 256);
        for (final RoundPipeline p : List.of(a, b))
        {
            p.begin(new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n));
            p.advance(600);
            p.advance(n);
        }
        drain();
        assertThat(joiningLate.ranges()).as("nothing staged before the lanes are known").isEmpty();
        joiningLate.joined.complete(null);
        assertThat(joiningLate.ranges()).as("staged on the agent's thread").isEmpty();
        drain();
        assertThat(joiningLate.ranges()).isEqualTo(joinedFirst.ranges())
            .containsExactly("0..200", "200..400", "400..600", "600..800", "800..1000");
        for (int c = 0; c < 5; c++)
        {
            joinedFirst.land(c);
            joiningLate.land(c);
        }
        drain();
        assertThat(outcome.completed).containsExactly(AgentProtocol.OK, AgentProtocol.OK);
    }

    @Test
    void shouldStageTheRoundWholeWhenTheSwitchJobFailedToOpenSoThatTheJobFails()
    {
        final int n = 1000;
        final Switch failed = new Switch(100, false);
        final RoundPipeline pipeline = pipeline(inputs(2, n, 7), arena.allocate(4L * n), failed, 4, 256);
        pipeline.begin(new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n));
        pipeline.advance(n);
        failed.joined.completeExceptionally(new IllegalStateException("no switch"));
        drain();
        assertThat(failed.ranges()).containsExactly("0..1000");
        failed.chunks.get(0).completeExceptionally(new IllegalStateException("no switch"));
        drain();
        assertThat(outcome.failures).hasSize(1);
    }

    @Test
    void shouldCutNetworkChunksOfAWholeRoundAsAChunkedHostDoes()
    {
        // Hosts decide their copy-in chunks themselves (cores against local ranks): a host with whole rounds must
        // still cut the round into the network chunks that a host with chunked rounds sends.
        final int n = 1000;
        final Switch wholeRounds = new Switch(100);
        final RankConnection[] members = {new RankConnection(null), new RankConnection(null)};
        for (int i = 0; i < 2; i++)
        {
            members[i].identity = new Hello(AgentProtocol.VERSION, i, 4, i, 2, 0, 2, 1, 100 + i, "k", 0);
        }
        final RoundPipeline pipeline = new RoundPipeline(inputs(2, n, 8), arena.allocate(4L * n), members, reducer,
            wholeRounds, posted::add, outcome, 4, 2, 0, 256);
        pipeline.begin(new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n));
        pipeline.advance(n);
        assertThat(wholeRounds.ranges()).containsExactly("0..200", "200..400", "400..600", "600..800", "800..1000");
        for (int c = 0; c < 5; c++)
        {
            wholeRounds.land(c);
            drain();
        }
        assertThat(outcome.done).containsExactly(200L, 400L, 600L, 800L);
        assertThat(outcome.completed).containsExactly(AgentProtocol.OK);
    }

    @Test
    void shouldStageTheRoundWholeOnceSummedWithoutNetworkChunks()
    {
        final int n = 1000;
        final MemorySegment[] inputs = inputs(2, n, 5);
        final Switch network = new Switch(100);
        final RankConnection[] members = {new RankConnection(null), new RankConnection(null)};
        for (int i = 0; i < 2; i++)
        {
            members[i].identity = new Hello(AgentProtocol.VERSION, i, 4, i, 2, 0, 2, 1, 100 + i, "k", 0);
        }
        final RoundPipeline pipeline = new RoundPipeline(inputs, arena.allocate(4L * n), members, reducer, network,
            posted::add, outcome, 4, 2, 256, 0);
        pipeline.begin(new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n));
        pipeline.advance(600);
        assertThat(network.ranges()).isEmpty();
        pipeline.advance(n);
        assertThat(network.ranges()).containsExactly("0..1000");
        network.land(0);
        drain();
        assertThat(outcome.done).isEmpty();
        assertThat(outcome.completed).containsExactly(AgentProtocol.OK);
    }

    @Test
    void shouldFailTheJobForANaNInALaterChunkOnlyAfterTheChunksOnTheNetworkLandedPublishingNothing()
    {
        final int n = 1000;
        final MemorySegment[] inputs = inputs(2, n, 3);
        inputs[1].setAtIndex(FLOAT, 700, Float.NaN);
        final MemorySegment result = arena.allocate(4L * n);
        final Switch network = new Switch(100);
        final RoundPipeline pipeline = pipeline(inputs, result, network, 4, 200);
        pipeline.begin(new CollectiveRequest(9, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n));
        pipeline.advance(600);
        assertThat(network.ranges()).hasSize(3);
        pipeline.advance(800);
        assertThat(network.ranges()).as("nothing staged past the NaN").hasSize(3);
        pipeline.advance(n);
        network.land(0);
        network.land(1);
        drain();
        assertThat(outcome.completed).as("a chunk is still on the network").isEmpty();
        network.land(2);
        drain();
        assertThat(outcome.done).isEmpty();
        // Across hosts the others sent the whole round: this host cannot match it, so the job fails (its next round
        // would be summed with the others' this round).
        assertThat(outcome.completed).isEmpty();
        assertThat(outcome.failures).singleElement().asString().contains("rank 1 ", "all-reduce #9", "ends the job");
        assertThat(pipeline.active()).isFalse();
    }

    @Test
    void shouldFailTheJobWhenAChunkFailsOnTheNetworkAndIgnoreWhatLandsAfter()
    {
        final int n = 600;
        final MemorySegment[] inputs = inputs(2, n, 4);
        final Switch network = new Switch(100);
        final RoundPipeline pipeline = pipeline(inputs, arena.allocate(4L * n), network, 4, 200);
        pipeline.begin(new CollectiveRequest(3, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n));
        pipeline.advance(n);
        network.chunks.get(0).completeExceptionally(new IllegalStateException("peer timeout"));
        drain();
        assertThat(outcome.failures).singleElement().asString().contains("all-reduce #3", "peer timeout");
        network.land(1);
        network.land(2);
        drain();
        assertThat(outcome.completed).isEmpty();
        assertThat(outcome.done).isEmpty();
    }

    @Test
    void shouldCutPartsIntoWholePartsOrPacketPiecesOfOnePart()
    {
        // Parts of 300 with chunks of 256 and 100 lanes: pieces of 200 within each part.
        final CollectiveRequest big = new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 900,
            900, 0, 0, 300, 4);
        assertThat(cuts(big, 100, 256)).containsExactly("0..200 parts of 200 from 4", "200..300 parts of 100 from 4",
            "300..500 parts of 200 from 5", "500..600 parts of 100 from 5", "600..800 parts of 200 from 6",
            "800..900 parts of 100 from 6");
        // Parts of 64 with chunks of 256: four whole parts a chunk.
        final CollectiveRequest small = new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32,
            640, 640, 0, 0, 64, 0);
        assertThat(cuts(small, 100, 256)).containsExactly("0..256 parts of 64 from 0", "256..512 parts of 64 from 4",
            "512..640 parts of 64 from 8");
        // No lanes known yet, or chunks off: one chunk, the round itself.
        assertThat(RoundPipeline.chunkEnd(big, 0, 0, 256)).isEqualTo(900);
        assertThat(RoundPipeline.chunk(big, 0, 900)).isSameAs(big);
        // Chunks smaller than a packet are a packet.
        final CollectiveRequest plain = new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32,
            250, 250);
        assertThat(cuts(plain, 100, 10)).containsExactly("0..100 parts of 0 from 0", "100..200 parts of 0 from 0",
            "200..250 parts of 0 from 0");
    }

    private static List<String> cuts(final CollectiveRequest r, final int lanes, final long chunkElements)
    {
        final List<String> cuts = new ArrayList<>();
        for (long at = 0; at < r.count(); )
        {
            final long end = RoundPipeline.chunkEnd(r, at, lanes, chunkElements);
            final CollectiveRequest c = RoundPipeline.chunk(r, at, end);
            cuts.add(at + ".." + end + " parts of " + c.partElements() + " from " + c.partRank());
            at = end;
        }
        return cuts;
    }

    private void drain()
    {
        Runnable task;
        while ((task = posted.poll()) != null)
        {
            task.run();
        }
    }

    private RoundPipeline pipeline(final MemorySegment[] inputs, final MemorySegment result, final Switch network,
        final int worldSize, final long chunkElements)
    {
        final RankConnection[] members = new RankConnection[inputs.length];
        for (int i = 0; i < members.length; i++)
        {
            members[i] = new RankConnection(null);
            members[i].identity = new Hello(AgentProtocol.VERSION, i, worldSize, i, inputs.length, 0,
                network == null ? 1 : 2, 1, 100 + i, "k", 0);
        }
        return new RoundPipeline(inputs, result, members, reducer, network, posted::add, outcome, worldSize,
            inputs.length, chunkElements, chunkElements);
    }

    private MemorySegment[] inputs(final int ranks, final int n, final long seed)
    {
        final Random random = new Random(seed);
        final MemorySegment[] inputs = new MemorySegment[ranks];
        for (int r = 0; r < ranks; r++)
        {
            inputs[r] = arena.allocate(4L * n);
            for (int i = 0; i < n; i++)
            {
                inputs[r].setAtIndex(FLOAT, i, (float)random.nextGaussian() * (1 << random.nextInt(20)));
            }
        }
        return inputs;
    }

    /** A switch stage whose chunks complete when {@link #land} says (their data left as it is). */
    private static final class Switch implements RoundPipeline.SwitchStage
    {
        final int lanes;
        final CompletableFuture<Void> joined = new CompletableFuture<>();
        final List<CompletableFuture<Void>> chunks = new ArrayList<>();
        final List<String> ranges = new ArrayList<>();

        /** A switch job already joined. */
        Switch(final int lanes)
        {
            this(lanes, true);
        }

        Switch(final int lanes, final boolean joined)
        {
            this.lanes = lanes;
            if (joined)
            {
                this.joined.complete(null);
            }
        }

        @Override
        public CompletableFuture<Void> stage(final MemorySegment data, final long at, final CollectiveRequest chunk,
            final int ranksPerHost)
        {
            final CompletableFuture<Void> f = new CompletableFuture<>();
            chunks.add(f);
            ranges.add(at + ".." + (at + chunk.count()));
            return f;
        }

        @Override
        public int lanes()
        {
            return joined.isDone() && !joined.isCompletedExceptionally() ? lanes : 0;
        }

        @Override
        public CompletableFuture<?> joined()
        {
            return joined;
        }

        List<String> ranges()
        {
            return ranges;
        }

        void land(final int chunk)
        {
            chunks.get(chunk).complete(null);
        }
    }

    private static final class Outcomes implements RoundPipeline.Outcome
    {
        final List<Long> done = new ArrayList<>();
        final List<Integer> completed = new ArrayList<>();
        final List<String> messages = new ArrayList<>();
        final List<String> failures = new ArrayList<>();

        @Override
        public void done(final long elements)
        {
            done.add(elements);
        }

        @Override
        public void complete(final int status, final String message)
        {
            completed.add(status);
            messages.add(message);
        }

        @Override
        public void failJob(final int status, final String message)
        {
            failures.add(message);
        }
    }
}
