package org.inagg.services.agent;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostAgentTest
{
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    @TempDir
    Path dir;
    private HostAgent agent;

    @BeforeEach
    void launch()
    {
        agent = HostAgent.launch(new HostAgentContext().name("test").directory(dir).slotBytes(2 << 20)
            .chunkBytes(4096).reducerThreads(2));
    }

    @AfterEach
    void close()
    {
        agent.close();
    }

    private Path socket()
    {
        return agent.context().socketPath();
    }

    @Test
    void shouldSumTheLocalRanksIntoTheResultAndFreeTheJobWhenTheyLeave() throws Exception
    {
        final int n = (1 << 18) + 3; // the parallel path and a tail
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-a");
             TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-a"))
        {
            assertThat(a.status).isEqualTo(AgentProtocol.OK);
            assertThat(b.file).isEqualTo(a.file);
            assertThat(a.header().get(SharedRegion.LONG, 0)).isEqualTo(SharedRegion.MAGIC);
            for (int i = 0; i < n; i++)
            {
                a.data().setAtIndex(FLOAT, i, i * 0.5f);
                b.data().setAtIndex(FLOAT, i, 1.0f);
            }
            final CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> round(a, n));
            assertThat(round(b, n)).isEqualTo(AgentProtocol.OK);
            assertThat(first.get()).isEqualTo(AgentProtocol.OK);
            for (int i = 0; i < n; i += 997)
            {
                assertThat(a.result().getAtIndex(FLOAT, i)).isEqualTo(i * 0.5f + 1.0f);
            }
            assertThat(a.result().getAtIndex(FLOAT, n - 1)).isEqualTo((n - 1) * 0.5f + 1.0f);

            // AVG of int32, truncating
            a.data().setAtIndex(INT, 0, 7);
            b.data().setAtIndex(INT, 0, -2);
            final CompletableFuture<Integer> avg = CompletableFuture.supplyAsync(() ->
                round(a, AgentProtocol.OP_AVG, AgentProtocol.DTYPE_INT32, 1));
            assertThat(round(b, AgentProtocol.OP_AVG, AgentProtocol.DTYPE_INT32, 1)).isEqualTo(AgentProtocol.OK);
            assertThat(avg.get()).isEqualTo(AgentProtocol.OK);
            assertThat(b.result().getAtIndex(INT, 0)).isEqualTo(2);
        }
        awaitNoJobs();
        try (var files = Files.list(dir))
        {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(f -> f.startsWith("inagg-test-"));
        }
    }

    @Test
    void shouldGatherEachRanksRangeIntoTheResultWithoutSummingAndLeaveTheRestAlone() throws Exception
    {
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-g");
             TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-g"))
        {
            final int words = 6;
            for (int i = 0; i < words; i++)
            {
                a.data().setAtIndex(INT, i, 100 + i); // only words 0..2 are a's to give
                b.data().setAtIndex(INT, i, 200 + i); // only words 3..4 are b's; word 5 nobody's
                a.result().setAtIndex(INT, i, -1);
            }
            final CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> gather(a, words, 0, 12));
            assertThat(gather(b, words, 12, 8)).isEqualTo(AgentProtocol.OK);
            assertThat(first.get()).isEqualTo(AgentProtocol.OK);
            assertThat(java.util.stream.IntStream.range(0, words).map(i -> b.result().getAtIndex(INT, i)).toArray())
                .containsExactly(100, 101, 102, 203, 204, -1);

            // a rank that gives nothing (a broadcast's non-root, a barrier)
            final CompletableFuture<Integer> second = CompletableFuture.supplyAsync(() -> gather(a, 1, 0, 0));
            assertThat(gather(b, 1, 0, 4)).isEqualTo(AgentProtocol.OK);
            assertThat(second.get()).isEqualTo(AgentProtocol.OK);
            assertThat(a.result().getAtIndex(INT, 0)).isEqualTo(200);
        }
    }

    @Test
    void shouldTakeTheMinimumAndMaximumExactlyAndRefuseANaNNamingItsRank() throws Exception
    {
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-m");
             TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-m"))
        {
            final int n = 1000; // more than a vector, not a multiple of one
            for (int i = 0; i < n; i++)
            {
                a.data().setAtIndex(FLOAT, i, i % 2 == 0 ? -i : Float.POSITIVE_INFINITY);
                b.data().setAtIndex(FLOAT, i, 0.5f * i);
            }
            final CompletableFuture<Integer> min = CompletableFuture.supplyAsync(() ->
                round(a, AgentProtocol.OP_MIN, AgentProtocol.DTYPE_FLOAT32, n));
            assertThat(round(b, AgentProtocol.OP_MIN, AgentProtocol.DTYPE_FLOAT32, n)).isEqualTo(AgentProtocol.OK);
            assertThat(min.get()).isEqualTo(AgentProtocol.OK);
            for (int i = 0; i < n; i++)
            {
                assertThat(a.result().getAtIndex(FLOAT, i)).isEqualTo(i % 2 == 0 ? -i : 0.5f * i);
            }
            for (int i = 0; i < n; i++)
            {
                a.data().setAtIndex(INT, i, i - 500);
                b.data().setAtIndex(INT, i, 500 - i);
            }
            final CompletableFuture<Integer> max = CompletableFuture.supplyAsync(() ->
                round(a, AgentProtocol.OP_MAX, AgentProtocol.DTYPE_INT32, n));
            assertThat(round(b, AgentProtocol.OP_MAX, AgentProtocol.DTYPE_INT32, n)).isEqualTo(AgentProtocol.OK);
            assertThat(max.get()).isEqualTo(AgentProtocol.OK);
            for (int i = 0; i < n; i++)
            {
                assertThat(b.result().getAtIndex(INT, i)).isEqualTo(Math.abs(i - 500));
            }
            for (int i = 0; i < n; i++)
            {
                a.data().setAtIndex(FLOAT, i, i);
                b.data().setAtIndex(FLOAT, i, -i);
            }
            b.data().setAtIndex(FLOAT, 777, Float.NaN);
            final CompletableFuture<Integer> nan = CompletableFuture.supplyAsync(() ->
                round(a, AgentProtocol.OP_MAX, AgentProtocol.DTYPE_FLOAT32, n));
            assertThat(round(b, AgentProtocol.OP_MAX, AgentProtocol.DTYPE_FLOAT32, n))
                .isEqualTo(AgentProtocol.ERROR_NON_FINITE);
            assertThat(nan.get()).isEqualTo(AgentProtocol.ERROR_NON_FINITE);
            assertThat(a.lastMessage()).contains("NaN", "rank 1", "element 777", "MAX of float32");
        }
    }

    private static int gather(final TestRank rank, final long words, final long from, final long length)
    {
        try
        {
            rank.gatherRequest(AgentProtocol.OP_GATHER, AgentProtocol.DTYPE_INT32, words, from, length);
            return rank.awaitCompletion();
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    @Test
    void shouldFailTheRoundOnEveryRankWhenSizesDifferOrAFloatIsNaNAndKeepTheJob() throws Exception
    {
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-b");
             TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-b"))
        {
            final CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> round(a, 10));
            assertThat(round(b, 11)).isEqualTo(AgentProtocol.ERROR_SIZE_MISMATCH);
            assertThat(first.get()).isEqualTo(AgentProtocol.ERROR_SIZE_MISMATCH);
            assertThat(a.lastMessage()).contains("sizes differ", "rank 0 has 10", "rank 1 has 11");

            b.data().setAtIndex(FLOAT, 3, Float.NaN);
            final CompletableFuture<Integer> second = CompletableFuture.supplyAsync(() -> round(a, 10));
            assertThat(round(b, 10)).isEqualTo(AgentProtocol.ERROR_NON_FINITE);
            assertThat(second.get()).isEqualTo(AgentProtocol.ERROR_NON_FINITE);
            assertThat(a.lastMessage()).contains("NaN or infinity", "rank 1");

            b.data().setAtIndex(FLOAT, 3, 1.0f);
            final CompletableFuture<Integer> third = CompletableFuture.supplyAsync(() -> round(a, 10));
            assertThat(round(b, 10)).isEqualTo(AgentProtocol.OK);
            assertThat(third.get()).isEqualTo(AgentProtocol.OK);
        }
    }

    @Test
    void shouldSumARoundCopiedInChunksOnlyOnceEveryRankCopiedAllOfItIn() throws Exception
    {
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-chunks");
             TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-chunks"))
        {
            assertThat(a.chunkElements()).isEqualTo(1024);
            final int n = 3000;
            for (int i = 0; i < n; i++)
            {
                a.data().setAtIndex(FLOAT, i, i);
                b.data().setAtIndex(FLOAT, i, 0.25f);
            }
            a.chunkedRequest(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, 1024);
            b.chunkedRequest(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, 1024);
            a.progress(2048);
            a.progress(n);
            b.progress(2048);
            final CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> await(a));
            Thread.sleep(200);
            assertThat(first).as("b has not copied all of it in").isNotDone();
            b.progress(n);
            assertThat(await(b)).isEqualTo(AgentProtocol.OK);
            assertThat(first.get()).isEqualTo(AgentProtocol.OK);
            for (int i = 0; i < n; i++)
            {
                assertThat(a.result().getAtIndex(FLOAT, i)).isEqualTo(i + 0.25f);
            }

            // A round error while a rank still copies in: its late chunks change nothing, the job goes on.
            a.chunkedRequest(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, 1024);
            b.chunkedRequest(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n - 1, 1024);
            a.progress(n);
            b.progress(n - 1);
            assertThat(await(a)).isEqualTo(AgentProtocol.ERROR_SIZE_MISMATCH);
            assertThat(await(b)).isEqualTo(AgentProtocol.ERROR_SIZE_MISMATCH);
            final CompletableFuture<Integer> again = CompletableFuture.supplyAsync(() -> round(a, 10));
            assertThat(round(b, 10)).isEqualTo(AgentProtocol.OK);
            assertThat(again.get()).isEqualTo(AgentProtocol.OK);

            // A ready count past the round is a broken rank: the job fails, naming it. (A count that shrinks is
            // refused the same way, RequestDecoderTest.)
            a.chunkedRequest(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, 2048);
            a.progress(n + 1);
            assertThat(a.awaitCompletion()).isEqualTo(AgentProtocol.ERROR_BAD_REQUEST);
            assertThat(a.lastMessage()).contains("local rank 0", "ready count 3001", "..3000");
        }
    }

    @Test
    void shouldSumNoFurtherThanTheDoorbellsAnnouncedWhateverTheReadyCountSays() throws Exception
    {
        // On aarch64 a rank's ready count can be seen before the data it covers; its doorbells order them. Here both
        // ranks' counts say the whole round at once while they have rung only the request (the first chunk).
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-announced");
             TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-announced"))
        {
            assertThat(a.chunkElements()).isEqualTo(1024);
            final int n = 3000;
            for (int i = 0; i < n; i++)
            {
                a.data().setAtIndex(FLOAT, i, 2 * i);
                b.data().setAtIndex(FLOAT, i, 1);
            }
            a.chunkedRequest(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n);
            b.chunkedRequest(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n);
            final CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> await(a));
            a.progress(n);
            b.progress(n);
            Thread.sleep(200);
            assertThat(first).as("two of three chunks announced").isNotDone();
            a.progress(n);
            b.progress(n);
            assertThat(await(b)).isEqualTo(AgentProtocol.OK);
            assertThat(first.get()).isEqualTo(AgentProtocol.OK);
            for (int i = 0; i < n; i++)
            {
                assertThat(a.result().getAtIndex(FLOAT, i)).isEqualTo(2 * i + 1f);
            }
        }
    }

    private static int await(final TestRank rank)
    {
        try
        {
            return rank.awaitCompletion();
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    @Test
    void shouldFailTheOthersWhenARankDisconnectsMidRoundAndServeTheNextJob() throws Exception
    {
        final TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-c");
        final TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-c");
        a.request(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 4);
        b.close(); // dies before its request
        assertThat(a.awaitCompletion()).isEqualTo(AgentProtocol.ERROR_RANK_LEFT);
        assertThat(a.lastMessage()).contains("local rank 1", "disconnected");
        a.close();
        awaitNoJobs();

        assertServesAOneRankJob("job-d", 2.5f);
    }

    @Test
    void shouldTellARankJoiningAfterItsJobsOnlyOtherRankLeftWhyInsteadOfStartingTheJobAgain() throws Exception
    {
        // Rank 1 joins first and gives up (it could not reserve its memory) before rank 0 joins: the job ends and its
        // file goes. Rank 0 must not get a fresh job that waits for rank 1 (it cannot join twice), nor the gone file.
        try (TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-early"))
        {
            assertThat(b.status).isEqualTo(AgentProtocol.OK);
        }
        awaitNoJobs();
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-early"))
        {
            assertThat(a.status).isEqualTo(AgentProtocol.ERROR_RANK_LEFT);
            assertThat(a.message).contains("local rank 1 (rank 1, pid 4242) of job job-early disconnected (died?) "
                + "before every local rank joined (1 of 2 did)", "create a new process group");
        }
        assertServesAOneRankJob("job-later", 3.5f);
    }

    @Test
    void shouldServeALateRankWhoseOnlyOtherRankSaidByeAndRefuseOneWhoseJobFailedBeforeItJoined() throws Exception
    {
        // A group torn down unused (bye) before a slower local rank builds it: that rank still gets its job.
        try (TestRank b = new TestRank(socket(), 1, 2, 1, 2, "job-unused"))
        {
            b.bye();
        }
        awaitNoJobs();
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-unused"))
        {
            assertThat(a.status).isEqualTo(AgentProtocol.OK);
        }
        awaitNoJobs();
        // A job that failed (local rank 1 never joined within the collective timeout): rank 1, coming late, is told.
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-timed-out", 200))
        {
            a.request(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 4);
            assertThat(a.awaitCompletion()).isEqualTo(AgentProtocol.ERROR_COLLECTIVE_TIMEOUT);
        }
        awaitNoJobs();
        try (TestRank late = new TestRank(socket(), 1, 2, 1, 2, "job-timed-out"))
        {
            assertThat(late.status).isEqualTo(AgentProtocol.ERROR_RANK_LEFT);
            assertThat(late.message).startsWith("job job-timed-out failed before every local rank joined (1 of 2 did), "
                + "so the job cannot run; create a new process group. It failed: all-reduce #1 of job job-timed-out: "
                + "local rank 1 (never joined) did not submit it");
        }
    }

    @Test
    void shouldFailTheJobNamingTheRanksThatDidNotRingWithinTheCollectiveTimeoutAndServeTheNextJob() throws Exception
    {
        try (TestRank a = new TestRank(socket(), 0, 3, 0, 3, "job-h", 300);
             TestRank b = new TestRank(socket(), 1, 3, 1, 3, "job-h", 300);
             TestRank hung = new TestRank(socket(), 2, 3, 2, 3, "job-h", 300))
        {
            assertThat(round(a, 4, b, hung)).isEqualTo(AgentProtocol.OK); // in time: the clock starts anew each round
            final long start = System.nanoTime();
            a.request(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 4);
            b.request(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 4);
            assertThat(a.awaitCompletion()).isEqualTo(AgentProtocol.ERROR_COLLECTIVE_TIMEOUT);
            final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(b.awaitCompletion()).isEqualTo(AgentProtocol.ERROR_COLLECTIVE_TIMEOUT);
            assertThat(waitedMs).isBetween(250L, 5_000L);
            assertThat(a.lastMessage()).contains("all-reduce #2 of job job-h: local rank 2 (rank 2, pid 4242) did "
                + "not submit it within the collective timeout of 0.300 s after local rank ", "the job is freed");
            awaitNoJobs();
            // The hung rank, waking up, finds the same error waiting for its next round.
            try
            {
                hung.request(AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 4);
            }
            catch (final IOException expected)
            {
                // its connection is closed: the descriptor holds the answer
            }
            assertThat(hung.completionStatus()).isEqualTo(AgentProtocol.ERROR_COLLECTIVE_TIMEOUT);
            assertThat(hung.lastMessage()).isEqualTo(a.lastMessage());
        }
        assertServesAOneRankJob("job-i", 1.5f);
    }

    @Test
    void shouldRefuseARankOfAnotherVersionOrWorldSizeWithAMessage() throws Exception
    {
        try (TestRank a = new TestRank(socket(), 0, 2, 0, 2, "job-e");
             TestRank b = new TestRank(socket(), 1, 3, 1, 3, "job-e");
             TestRank c = new TestRank(socket(), 1, 2, 0, 2, "job-e"))
        {
            assertThat(a.status).isEqualTo(AgentProtocol.OK);
            assertThat(b.status).isEqualTo(AgentProtocol.ERROR_WORLD_MISMATCH);
            assertThat(b.message).contains("world size 3");
            assertThat(c.status).isEqualTo(AgentProtocol.ERROR_WORLD_MISMATCH);
            assertThat(c.message).contains("joined job job-e twice");
        }
    }

    @Test
    void shouldServeOnlyItsJobWhenPinned() throws Exception
    {
        try (HostAgent pinned = HostAgent.launch(new HostAgentContext().name("pinned").directory(dir)
                .slotBytes(4096).jobKey("mine").idleExit(Duration.ofSeconds(30)));
             TestRank other = new TestRank(pinned.context().socketPath(), 0, 1, 0, 1, "theirs"))
        {
            assertThat(other.status).isEqualTo(AgentProtocol.ERROR_JOB_MISMATCH);
            assertThat(other.message).contains("serves job mine only, not job theirs");
        }
    }

    @Test
    void shouldTellItsRanksTheSettingsEveryHostOfAJobMustShare() throws Exception
    {
        try (HostAgent chunked = HostAgent.launch(new HostAgentContext().name("chunked").directory(dir)
                .slotBytes(8192).networkChunkBytes(4096));
             TestRank rank = new TestRank(chunked.context().socketPath(), 0, 1, 0, 1, "job-chunked"))
        {
            assertThat(rank.status).isEqualTo(AgentProtocol.OK);
            assertThat(rank.capacity).isEqualTo(8192);
            assertThat(rank.networkChunkBytes()).isEqualTo(4096);
        }
        try (TestRank rank = new TestRank(socket(), 0, 1, 0, 1, "job-whole"))
        {
            assertThat(rank.capacity).isEqualTo(2 << 20);
            assertThat(rank.networkChunkBytes()).isZero();
        }
    }

    @Test
    void shouldRefuseASecondAgentOnTheSameSocket()
    {
        final HostAgentContext again = new HostAgentContext().name("test").directory(dir);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> HostAgent.launch(again))
            .hasMessageContaining("another agent is listening on " + socket());
    }

    private void awaitNoJobs() throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (agent.activeJobs() > 0 && System.nanoTime() < deadline)
        {
            Thread.sleep(10);
        }
        assertThat(agent.activeJobs()).isZero();
    }

    /** The agent still serves: a fresh one-rank job {@code key} sums {@code value} to itself. */
    private void assertServesAOneRankJob(final String key, final float value) throws Exception
    {
        try (TestRank c = new TestRank(socket(), 0, 1, 0, 1, key))
        {
            c.data().setAtIndex(FLOAT, 0, value);
            assertThat(round(c, 1)).isEqualTo(AgentProtocol.OK);
            assertThat(c.result().getAtIndex(FLOAT, 0)).isEqualTo(value);
        }
    }

    /** A round of {@code count} float32 SUM on {@code first} and {@code others} together; the first's status. */
    private static int round(final TestRank first, final long count, final TestRank... others) throws Exception
    {
        final java.util.List<CompletableFuture<Integer>> rest = new java.util.ArrayList<>();
        for (final TestRank other : others)
        {
            rest.add(CompletableFuture.supplyAsync(() -> round(other, count), r -> Thread.ofPlatform().daemon().start(r)));
        }
        final int status = round(first, count);
        for (final CompletableFuture<Integer> each : rest)
        {
            assertThat(each.get()).isEqualTo(status);
        }
        return status;
    }

    private static int round(final TestRank rank, final long count)
    {
        return round(rank, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, count);
    }

    private static int round(final TestRank rank, final int op, final int dtype, final long count)
    {
        try
        {
            rank.request(op, dtype, count);
            return rank.awaitCompletion();
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
