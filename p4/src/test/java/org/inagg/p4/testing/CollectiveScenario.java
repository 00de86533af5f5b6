package org.inagg.p4.testing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.api.ReduceOp;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.Transport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every collective and reduce op of docs/wire-format.md run by the workers of one job through the public API, each
 * checked against its definition, with every worker's outputs returned as raw bits: a topology (one switch, two
 * levels, an ESA switch and its server) gives a one-level switch's results when its bits equal those of
 * {@link #run} through a one-level switch. The aggregation nodes each run on their own thread ({@link #start}).
 */
public final class CollectiveScenario implements AutoCloseable
{
    /** Elements of each worker's shard (REDUCE_SCATTER out, ALL_GATHER in): not a multiple of 64 lanes. */
    private static final int SHARD = 2 * 64 + 13;

    private final List<AgentRunner> runners = new ArrayList<>();
    private final List<AllReduceJob> jobs = new ArrayList<>();
    private final int jobId;
    private final int workers;

    public CollectiveScenario(final int jobId, final int workers)
    {
        this.jobId = jobId;
        this.workers = workers;
    }

    /** {@link #run} through one {@link SoftwareSwitch} (peer 0, the workers at 1..W): the reference bits. */
    public static int[][] throughOneSwitch(final int jobId, final int workers, final int slots, final int lanes,
        final double loss)
    {
        try (CollectiveScenario scenario = new CollectiveScenario(jobId, workers))
        {
            final InProcessNetwork network = new InProcessNetwork(1 + workers, 1 << 20, 2048);
            final SoftwareSwitch sw = new SoftwareSwitch(endpoint(network, 0, loss), new CounterRegistry(64), 64);
            sw.addJob(new SwitchJobConfig(jobId, workers, slots, lanes));
            scenario.start(sw);
            for (int w = 0; w < workers; w++)
            {
                scenario.openWorker(endpoint(network, 1 + w, loss), 0);
            }
            return scenario.run();
        }
    }

    /** A network endpoint, losing {@code loss} of its messages (seeded by the peer) when not 0. */
    public static Transport endpoint(final InProcessNetwork network, final int peer, final double loss)
    {
        final Transport endpoint = network.endpoint(peer);
        return loss == 0 ? endpoint : new FaultInjectingTransport(endpoint, FaultConfig.lossy(loss, 31 + peer));
    }

    /** Runs an aggregation node on a thread of its own until {@link #close}. */
    public void start(final Agent agent)
    {
        final AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(0), Throwable::printStackTrace, null,
            agent);
        runners.add(runner);
        AgentRunner.startOnThread(runner);
    }

    /** Opens the next worker's job (worker ids in order) over {@code transport}, sending to {@code switchPeer}. */
    public void openWorker(final Transport transport, final int switchPeer)
    {
        jobs.add(AllReduceJob.open(new JobContext().jobId(jobId).workers(workers).workerId(jobs.size())
            .transport(transport).switchPeer(switchPeer)));
    }

    /**
     * ALL_REDUCE MIN (floats) and MAX (ints), REDUCE_SCATTER SUM (floats) and MIN (ints), ALL_GATHER (floats, ints),
     * BROADCAST (ints from the last worker, floats from the first), each checked against its definition; returns every
     * worker's outputs, concatenated as raw bits.
     */
    public int[][] run()
    {
        final float[][] minima = new float[workers][];
        final int[][] maxima = new int[workers][];
        final float[][] sumShards = new float[workers][SHARD];
        final int[][] minShards = new int[workers][SHARD];
        final float[][] gatheredFloats = new float[workers][workers * SHARD];
        final int[][] gatheredInts = new int[workers][workers * SHARD];
        final int[][] broadcastInts = new int[workers][];
        final float[][] broadcastFloats = new float[workers][];
        for (int w = 0; w < workers; w++)
        {
            minima[w] = floats(w, 700);
            maxima[w] = ints(w, 333);
            broadcastInts[w] = ints(w + 10, 500);
            broadcastFloats[w] = floats(w + 10, 300);
        }
        final float[][] minimaIn = Arrays.stream(minima).map(float[]::clone).toArray(float[][]::new);
        final int[][] maximaIn = Arrays.stream(maxima).map(int[]::clone).toArray(int[][]::new);
        final int intRoot = workers - 1;
        final int[] intRootData = broadcastInts[intRoot].clone();
        final float[] floatRootData = broadcastFloats[0].clone();

        all(w -> jobs.get(w).allReduceAsync(minima[w], ReduceOp.MIN));
        all(w -> jobs.get(w).allReduceAsync(maxima[w], ReduceOp.MAX));
        all(w -> jobs.get(w).reduceScatterAsync(floats(w + 20, workers * SHARD), sumShards[w], ReduceOp.SUM));
        all(w -> jobs.get(w).reduceScatterAsync(ints(w + 20, workers * SHARD), minShards[w], ReduceOp.MIN));
        all(w -> jobs.get(w).allGatherAsync(floats(w + 30, SHARD), gatheredFloats[w]));
        all(w -> jobs.get(w).allGatherAsync(ints(w + 30, SHARD), gatheredInts[w]));
        all(w -> jobs.get(w).broadcastAsync(broadcastInts[w], intRoot));
        all(w -> jobs.get(w).broadcastAsync(broadcastFloats[w], 0));

        final int[][] bits = new int[workers][];
        for (int w = 0; w < workers; w++)
        {
            for (int k = 0; k < 700; k++)
            {
                float min = minimaIn[0][k];
                for (int v = 1; v < workers; v++)
                {
                    min = Math.min(min, minimaIn[v][k]);
                }
                assertThat(minima[w][k]).as("worker %d min %d", w, k).isEqualTo(min);
            }
            for (int k = 0; k < 333; k++)
            {
                int max = Integer.MIN_VALUE;
                for (int v = 0; v < workers; v++)
                {
                    max = Math.max(max, maximaIn[v][k]);
                }
                assertThat(maxima[w][k]).as("worker %d max %d", w, k).isEqualTo(max);
            }
            for (int k = 0; k < SHARD; k++)
            {
                int min = Integer.MAX_VALUE;
                for (int v = 0; v < workers; v++)
                {
                    min = Math.min(min, ints(v + 20, workers * SHARD)[w * SHARD + k]);
                }
                assertThat(minShards[w][k]).as("worker %d min shard %d", w, k).isEqualTo(min);
            }
            for (int v = 0; v < workers; v++)
            {
                assertThat(Arrays.copyOfRange(gatheredInts[w], v * SHARD, (v + 1) * SHARD))
                    .as("worker %d's gathered shard of worker %d", w, v).isEqualTo(ints(v + 30, SHARD));
                assertThat(floatBits(Arrays.copyOfRange(gatheredFloats[w], v * SHARD, (v + 1) * SHARD)))
                    .isEqualTo(floatBits(floats(v + 30, SHARD)));
            }
            assertThat(broadcastInts[w]).isEqualTo(intRootData);
            assertThat(floatBits(broadcastFloats[w])).isEqualTo(floatBits(floatRootData));
            bits[w] = concat(floatBits(minima[w]), maxima[w], floatBits(sumShards[w]), minShards[w],
                floatBits(gatheredFloats[w]), gatheredInts[w], broadcastInts[w], floatBits(broadcastFloats[w]));
        }
        return bits;
    }

    @Override
    public void close()
    {
        jobs.forEach(AllReduceJob::close);
        runners.forEach(AgentRunner::close);
    }

    private void all(final IntFunction<CompletableFuture<Void>> operation)
    {
        final List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            futures.add(operation.apply(w));
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
    }

    private static float[] floats(final int seed, final int n)
    {
        final SplittableRandom random = new SplittableRandom(seed * 1_000_003L + n);
        final float[] values = new float[n];
        for (int k = 0; k < n; k++)
        {
            values[k] = (float)(random.nextDouble(-1, 1) * Math.scalb(1.0, random.nextInt(-10, 10)));
        }
        return values;
    }

    private static int[] ints(final int seed, final int n)
    {
        final SplittableRandom random = new SplittableRandom(seed * 7_919L + n);
        final int[] values = new int[n];
        for (int k = 0; k < n; k++)
        {
            values[k] = random.nextInt();
        }
        return values;
    }

    private static int[] floatBits(final float[] values)
    {
        final int[] bits = new int[values.length];
        for (int k = 0; k < values.length; k++)
        {
            bits[k] = Float.floatToRawIntBits(values[k]);
        }
        return bits;
    }

    private static int[] concat(final int[]... parts)
    {
        return Arrays.stream(parts).flatMapToInt(Arrays::stream).toArray();
    }
}
