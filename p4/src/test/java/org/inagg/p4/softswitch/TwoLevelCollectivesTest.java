package org.inagg.p4.softswitch;

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
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.Transport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every collective and reduce op through two-level aggregation (issue 25), bit for bit what the one-level switch gives
 * the same workers: switch S1 sums workers 0 and 1, switch S2 worker 2, worker 3 sends straight to the parameter
 * server, which finishes each round from the two PARTIALs and worker 3's raw packets. The same inputs run through one
 * {@link SoftwareSwitch} and through the two levels, with and without loss (whose retransmissions of complete rounds
 * the server answers, header-only to a REDUCE_SCATTER round's other workers), and every worker's outputs are compared
 * as raw bits, besides being checked against what each collective must give.
 */
@Timeout(180)
class TwoLevelCollectivesTest
{
    private static final int JOB = 5;
    private static final int WORKERS = 4;
    private static final int LANES = 64;
    private static final int SLOTS = 8;
    /** Two-level peers: S1, S2, the server, then the workers. */
    private static final int S1 = 0;
    private static final int S2 = 1;
    private static final int PS = 2;
    private static final int FIRST_WORKER_PEER = 3;
    /** Elements of each worker's shard (REDUCE_SCATTER out, ALL_GATHER in): not a multiple of the lanes. */
    private static final int SHARD = 2 * LANES + 13;

    @ParameterizedTest(name = "loss {0}")
    @ValueSource(doubles = {0.0, 0.03})
    void shouldGiveTheOneLevelSwitchsBitsForEveryCollectiveAndOp(final double loss)
    {
        final int[][] oneLevel;
        try (Cluster cluster = Cluster.oneLevel(loss))
        {
            oneLevel = runEveryCollective(cluster.jobs);
        }
        final int[][] twoLevel;
        try (Cluster cluster = Cluster.twoLevel(loss))
        {
            twoLevel = runEveryCollective(cluster.jobs);
            assertThat(cluster.counter(S1, SwitchCounter.UPSTREAM_PARTIALS)).isPositive();
            assertThat(cluster.counter(S2, SwitchCounter.UPSTREAM_PARTIALS)).isPositive();
            assertThat(cluster.counter(S1, SwitchCounter.RESULTS_SENT)).as("results come from the server").isZero();
            assertThat(cluster.counter(S1, SwitchCounter.DROP_UNSUPPORTED)).isZero();
            assertThat(cluster.server.counter(ServerCounter.PARTIALS_MERGED)).isPositive();
            assertThat(cluster.server.counter(ServerCounter.RAW_MERGED)).as("worker 3 sends raw").isPositive();
            assertThat(cluster.server.counter(ServerCounter.DROP_UNSUPPORTED)).isZero();
            if (loss > 0)
            {
                assertThat(cluster.server.counter(ServerCounter.RETRANSMIT_REPLIES))
                    .as("retransmissions of complete rounds answered by the server").isPositive();
            }
        }
        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(twoLevel[w]).as("worker %d's outputs, as raw bits", w).isEqualTo(oneLevel[w]);
        }
    }

    /**
     * ALL_REDUCE MIN (floats) and MAX (ints), REDUCE_SCATTER SUM (floats) and MIN (ints), ALL_GATHER (floats, ints)
     * and BROADCAST (ints from worker 2, floats from worker 1), each checked against its definition; returns every
     * worker's outputs, concatenated as raw bits.
     */
    private static int[][] runEveryCollective(final List<AllReduceJob> jobs)
    {
        final float[][] minima = new float[WORKERS][];
        final int[][] maxima = new int[WORKERS][];
        final float[][] sumShards = new float[WORKERS][SHARD];
        final int[][] minShards = new int[WORKERS][SHARD];
        final float[][] gatheredFloats = new float[WORKERS][WORKERS * SHARD];
        final int[][] gatheredInts = new int[WORKERS][WORKERS * SHARD];
        final int[][] broadcastInts = new int[WORKERS][];
        final float[][] broadcastFloats = new float[WORKERS][];
        for (int w = 0; w < WORKERS; w++)
        {
            minima[w] = floats(w, 700);
            maxima[w] = ints(w, 333);
            broadcastInts[w] = ints(w + 10, 500);
            broadcastFloats[w] = floats(w + 10, 300);
        }
        final float[][] minimaIn = deepCopy(minima);
        final int[][] maximaIn = deepCopy(maxima);
        final int[] intRoot = broadcastInts[2].clone();
        final float[] floatRoot = broadcastFloats[1].clone();

        all(jobs, w -> jobs.get(w).allReduceAsync(minima[w], ReduceOp.MIN));
        all(jobs, w -> jobs.get(w).allReduceAsync(maxima[w], ReduceOp.MAX));
        all(jobs, w -> jobs.get(w).reduceScatterAsync(floats(w + 20, WORKERS * SHARD), sumShards[w], ReduceOp.SUM));
        all(jobs, w -> jobs.get(w).reduceScatterAsync(ints(w + 20, WORKERS * SHARD), minShards[w], ReduceOp.MIN));
        all(jobs, w -> jobs.get(w).allGatherAsync(floats(w + 30, SHARD), gatheredFloats[w]));
        all(jobs, w -> jobs.get(w).allGatherAsync(ints(w + 30, SHARD), gatheredInts[w]));
        all(jobs, w -> jobs.get(w).broadcastAsync(broadcastInts[w], 2));
        all(jobs, w -> jobs.get(w).broadcastAsync(broadcastFloats[w], 1));

        final int[][] bits = new int[WORKERS][];
        for (int w = 0; w < WORKERS; w++)
        {
            for (int k = 0; k < 700; k++)
            {
                float min = minimaIn[0][k];
                for (int v = 1; v < WORKERS; v++)
                {
                    min = Math.min(min, minimaIn[v][k]);
                }
                assertThat(minima[w][k]).as("worker %d min %d", w, k).isEqualTo(min);
            }
            for (int k = 0; k < 333; k++)
            {
                int max = Integer.MIN_VALUE;
                for (int v = 0; v < WORKERS; v++)
                {
                    max = Math.max(max, maximaIn[v][k]);
                }
                assertThat(maxima[w][k]).as("worker %d max %d", w, k).isEqualTo(max);
            }
            for (int k = 0; k < SHARD; k++)
            {
                int min = Integer.MAX_VALUE;
                for (int v = 0; v < WORKERS; v++)
                {
                    min = Math.min(min, ints(v + 20, WORKERS * SHARD)[w * SHARD + k]);
                }
                assertThat(minShards[w][k]).as("worker %d min shard %d", w, k).isEqualTo(min);
            }
            for (int v = 0; v < WORKERS; v++)
            {
                assertThat(Arrays.copyOfRange(gatheredInts[w], v * SHARD, (v + 1) * SHARD))
                    .as("worker %d's gathered shard of worker %d", w, v).isEqualTo(ints(v + 30, SHARD));
                assertThat(floatBits(Arrays.copyOfRange(gatheredFloats[w], v * SHARD, (v + 1) * SHARD)))
                    .isEqualTo(floatBits(floats(v + 30, SHARD)));
            }
            assertThat(broadcastInts[w]).isEqualTo(intRoot);
            assertThat(floatBits(broadcastFloats[w])).isEqualTo(floatBits(floatRoot));
            bits[w] = concat(floatBits(minima[w]), maxima[w], floatBits(sumShards[w]), minShards[w],
                floatBits(gatheredFloats[w]), gatheredInts[w], broadcastInts[w], floatBits(broadcastFloats[w]));
        }
        return bits;
    }

    /** The workers and the aggregation nodes of one topology, each node on its own thread. */
    private static final class Cluster implements AutoCloseable
    {
        private final List<AgentRunner> runners = new ArrayList<>();
        private final List<SoftwareSwitch> switches = new ArrayList<>();
        private final List<AllReduceJob> jobs = new ArrayList<>();
        private ParameterServer server;

        static Cluster oneLevel(final double loss)
        {
            final Cluster cluster = new Cluster();
            final InProcessNetwork network = new InProcessNetwork(1 + WORKERS, 1 << 20, 2048);
            final SoftwareSwitch sw = new SoftwareSwitch(endpoint(network, 0, loss), new CounterRegistry(64), 64);
            sw.addJob(new SwitchJobConfig(JOB, WORKERS, SLOTS, LANES));
            cluster.switches.add(sw);
            cluster.start(sw);
            for (int w = 0; w < WORKERS; w++)
            {
                cluster.open(endpoint(network, 1 + w, loss), w, 0);
            }
            return cluster;
        }

        static Cluster twoLevel(final double loss)
        {
            final Cluster cluster = new Cluster();
            final InProcessNetwork network = new InProcessNetwork(FIRST_WORKER_PEER + WORKERS, 1 << 20, 2048);
            final CounterRegistry registry = new CounterRegistry(256);
            final int[] workerPeers = new int[WORKERS];
            for (int w = 0; w < WORKERS; w++)
            {
                workerPeers[w] = FIRST_WORKER_PEER + w;
            }
            final SwitchJobConfig config = new SwitchJobConfig(JOB, WORKERS, SLOTS, LANES,
                SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP, workerPeers);
            final SoftwareSwitch s1 = new SoftwareSwitch(endpoint(network, S1, loss), registry, 64);
            final SoftwareSwitch s2 = new SoftwareSwitch(endpoint(network, S2, loss), registry, 64);
            s1.addJob(config, new UpstreamAggregation(PS, new int[] {0, 1}));
            s2.addJob(config, new UpstreamAggregation(PS, new int[] {2}));
            cluster.server = new ParameterServer(endpoint(network, PS, loss), registry, 64, 64);
            cluster.server.addJob(new ServerJobConfig(JOB, WORKERS, workerPeers, S1, false, SLOTS, LANES));
            cluster.switches.add(s1);
            cluster.switches.add(s2);
            cluster.start(s1);
            cluster.start(s2);
            cluster.start(cluster.server);
            final int[] sendsTo = {S1, S1, S2, PS};
            for (int w = 0; w < WORKERS; w++)
            {
                cluster.open(endpoint(network, FIRST_WORKER_PEER + w, loss), w, sendsTo[w]);
            }
            return cluster;
        }

        long counter(final int switchIndex, final SwitchCounter counter)
        {
            return switches.get(switchIndex).counter(counter);
        }

        private void start(final Agent agent)
        {
            final AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(0), Throwable::printStackTrace,
                null, agent);
            runners.add(runner);
            AgentRunner.startOnThread(runner);
        }

        private void open(final Transport transport, final int worker, final int switchPeer)
        {
            jobs.add(AllReduceJob.open(new JobContext().jobId(JOB).workers(WORKERS).workerId(worker)
                .transport(transport).switchPeer(switchPeer)));
        }

        @Override
        public void close()
        {
            jobs.forEach(AllReduceJob::close);
            runners.forEach(AgentRunner::close);
        }
    }

    private static Transport endpoint(final InProcessNetwork network, final int peer, final double loss)
    {
        final Transport endpoint = network.endpoint(peer);
        return loss == 0 ? endpoint : new FaultInjectingTransport(endpoint, FaultConfig.lossy(loss, 31 + peer));
    }

    private static void all(final List<AllReduceJob> jobs, final IntFunction<CompletableFuture<Void>> operation)
    {
        final List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int w = 0; w < jobs.size(); w++)
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

    private static float[][] deepCopy(final float[][] values)
    {
        return Arrays.stream(values).map(float[]::clone).toArray(float[][]::new);
    }

    private static int[][] deepCopy(final int[][] values)
    {
        return Arrays.stream(values).map(int[]::clone).toArray(int[][]::new);
    }

    private static int[] concat(final int[]... parts)
    {
        return Arrays.stream(parts).flatMapToInt(Arrays::stream).toArray();
    }
}
