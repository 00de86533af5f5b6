package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.api.AllReduceJob;
import org.inagg.api.ElementType;
import org.inagg.api.JobContext;
import org.inagg.api.ReduceOp;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The public API's collectives, four jobs (one per worker, each on its own thread) on the software switch. */
@Timeout(60)
class CollectivesApiTest
{
    private static final int JOB = 4;
    private static final int WORKERS = 4;
    private static final int LANES = 64;

    private AgentRunner switchRunner;
    private final List<AllReduceJob> jobs = new ArrayList<>();

    @BeforeEach
    void setUp()
    {
        final InProcessNetwork network = new InProcessNetwork(WORKERS + 1, 1 << 20, 2048);
        final SoftwareSwitch sw = new SoftwareSwitch(network.endpoint(0), new CounterRegistry(64), 64);
        sw.addJob(new SwitchJobConfig(JOB, WORKERS, 8, LANES));
        switchRunner = new AgentRunner(new SleepingMillisIdleStrategy(0), Throwable::printStackTrace, null, sw);
        AgentRunner.startOnThread(switchRunner);
        for (int w = 0; w < WORKERS; w++)
        {
            jobs.add(AllReduceJob.open(new JobContext().jobId(JOB).workers(WORKERS).workerId(w)
                .transport(network.endpoint(1 + w)).switchPeer(0)));
        }
    }

    @AfterEach
    void tearDown()
    {
        jobs.forEach(AllReduceJob::close);
        switchRunner.close();
    }

    @Test
    @Timeout(30)
    void shouldFailTheOperationAndTheJobWhenTheWorkersThreadCannotTouchTheTensor()
    {
        try (Arena confined = Arena.ofConfined())
        {
            final MemorySegment data = confined.allocate(4096);
            final CompletableFuture<Void> done = jobs.get(0).allReduceAsync(data, data, ElementType.FLOAT32);
            assertThatThrownBy(done::join)
                .hasRootCauseInstanceOf(WrongThreadException.class)
                .hasMessageContaining("the worker's thread failed");
            assertThatThrownBy(() -> jobs.get(0).allReduce(new float[8]))
                .hasMessageContaining("failed");
        }
    }

    @Test
    void shouldReduceScatterFloatsWithTheAllReducesBitsAndIntsExactly()
    {
        final int n = 2 * LANES;
        final float[][] gradients = new float[WORKERS][];
        final float[][] summed = new float[WORKERS][];
        final float[][] shards = new float[WORKERS][n];
        for (int w = 0; w < WORKERS; w++)
        {
            gradients[w] = floats(w, WORKERS * n);
            summed[w] = new float[WORKERS * n];
        }
        all(w -> jobs.get(w).allReduceAsync(gradients[w], summed[w]));
        all(w -> jobs.get(w).reduceScatterAsync(gradients[w], shards[w], ReduceOp.SUM));
        for (int w = 0; w < WORKERS; w++)
        {
            for (int k = 0; k < n; k++)
            {
                assertThat(Float.floatToRawIntBits(shards[w][k]))
                    .isEqualTo(Float.floatToRawIntBits(summed[w][w * n + k]));
            }
        }

        final int[][] ints = new int[WORKERS][];
        final int[][] maxima = new int[WORKERS][77];
        for (int w = 0; w < WORKERS; w++)
        {
            ints[w] = ints(w, WORKERS * 77);
        }
        all(w -> jobs.get(w).reduceScatterAsync(ints[w], maxima[w], ReduceOp.MAX));
        for (int w = 0; w < WORKERS; w++)
        {
            for (int k = 0; k < 77; k++)
            {
                int max = Integer.MIN_VALUE;
                for (int v = 0; v < WORKERS; v++)
                {
                    max = Math.max(max, ints[v][w * 77 + k]);
                }
                assertThat(maxima[w][k]).isEqualTo(max);
            }
        }
    }

    @Test
    void shouldAllGatherAndBroadcastRawBits()
    {
        final float[][] mine = new float[WORKERS][];
        final float[][] all = new float[WORKERS][WORKERS * 100];
        for (int w = 0; w < WORKERS; w++)
        {
            mine[w] = floats(w, 100);
            mine[w][w] = Float.NaN;                                      // raw bits: a NaN is gathered as it is
        }
        all(w -> jobs.get(w).allGatherAsync(mine[w], all[w]));
        for (int w = 0; w < WORKERS; w++)
        {
            for (int v = 0; v < WORKERS; v++)
            {
                for (int k = 0; k < 100; k++)
                {
                    assertThat(Float.floatToRawIntBits(all[w][v * 100 + k]))
                        .isEqualTo(Float.floatToRawIntBits(mine[v][k]));
                }
            }
        }

        final int[][] data = new int[WORKERS][];
        for (int w = 0; w < WORKERS; w++)
        {
            data[w] = ints(w, 333);
        }
        final int[] root = data[2].clone();
        all(w -> jobs.get(w).broadcastAsync(data[w], 2));
        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(data[w]).isEqualTo(root);
        }
    }

    @Test
    void shouldAllReduceMinimaAndMaximaExactly()
    {
        final float[][] data = new float[WORKERS][];
        for (int w = 0; w < WORKERS; w++)
        {
            data[w] = floats(w, 500);
        }
        final float[] expected = new float[500];
        for (int k = 0; k < 500; k++)
        {
            expected[k] = data[0][k];
            for (int w = 1; w < WORKERS; w++)
            {
                expected[k] = Math.min(expected[k], data[w][k]);
            }
        }
        all(w -> jobs.get(w).allReduceAsync(data[w], ReduceOp.MIN));
        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(data[w]).isEqualTo(expected);
        }
    }

    private static void all(final IntFunction<CompletableFuture<Void>> operation)
    {
        final List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            futures.add(operation.apply(w));
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
    }

    private static float[] floats(final int worker, final int n)
    {
        final SplittableRandom random = new SplittableRandom(worker * 1_000_003L + n);
        final float[] values = new float[n];
        for (int k = 0; k < n; k++)
        {
            values[k] = (float)(random.nextDouble(-1, 1) * Math.scalb(1.0, random.nextInt(-10, 10)));
        }
        return values;
    }

    private static int[] ints(final int worker, final int n)
    {
        final SplittableRandom random = new SplittableRandom(worker * 7_919L + n);
        final int[] values = new int[n];
        for (int k = 0; k < n; k++)
        {
            values[k] = random.nextInt();
        }
        return values;
    }
}
