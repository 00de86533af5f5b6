package org.inagg.perf.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.inagg.InvalidTensorException;
import org.inagg.PeerTimeoutException;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.services.cli.SyntheticGradients;
import org.inagg.protocol.WorkerCounter;
import org.inagg.transport.FaultConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Whole jobs (software switch and workers) over in-process rings and loopback UDP: results are bit-identical whatever
 * is lost, duplicated or reordered, and within the fixed-point bound of a double-precision sum.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class EndToEndAllReduceTest
{
    private static final double[] LOSSES = {0.01, 0.10};

    static Stream<Arguments> matrix()
    {
        final List<Arguments> cases = new ArrayList<>();
        for (final TransportKind transport : TransportKind.values())
        {
            if (transport == TransportKind.DPDK)
            {
                continue; // DpdkEndToEndTest: one EAL per process, at most 30 workers
            }
            for (final int workers : new int[] {2, 4, 64})
            {
                for (final int length : new int[] {1, 255, 257, 1_000_003})
                {
                    cases.add(Arguments.of(transport, workers, length));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} workers={1} length={2}")
    @MethodSource("matrix")
    void shouldGiveBitIdenticalSumsUnderLossDuplicationAndReordering(
        final TransportKind transport, final int workers, final int length)
    {
        final float[][] inputs = gradients(workers, length, 42 + length);
        final ClusterOptions base = ClusterOptions.defaults(workers).withTransport(transport)
            .withSlots(workers > 8 ? 32 : 128)
            .withTimeouts(Duration.ofMillis(transport == TransportKind.UDP ? 5 : 2), Duration.ofSeconds(30));

        final float[][] lossless = run(base, inputs);
        assertWithinBound(inputs, lossless[0]);
        for (int w = 1; w < workers; w++)
        {
            assertThat(lossless[w]).as("worker %d agrees with worker 0", w).isEqualTo(lossless[0]);
        }

        for (final double loss : LOSSES)
        {
            final float[][] lossy = run(base.withFaults(FaultConfig.lossy(loss, 7)), inputs);
            for (int w = 0; w < workers; w++)
            {
                assertBitIdentical(lossy[w], lossless[0], "worker " + w + " at loss " + loss);
            }
        }
    }

    @Test
    void shouldKeepSumsIdenticalOverManyConsecutiveOperationsUnderFaults()
    {
        final int workers = 4;
        final ClusterOptions options = ClusterOptions.defaults(workers).withSlots(8)
            .withTimeouts(Duration.ofMillis(1), Duration.ofSeconds(30));
        final List<float[][]> rounds = new ArrayList<>();
        for (int r = 0; r < 30; r++)
        {
            rounds.add(gradients(workers, 1 + r * 97, r));
        }
        final List<float[]> clean = new ArrayList<>();
        try (LocalCluster cluster = LocalCluster.start(options))
        {
            for (final float[][] round : rounds)
            {
                final float[][] copy = deepCopy(round);
                cluster.allReduce(copy);
                clean.add(copy[0]);
            }
        }
        try (LocalCluster cluster = LocalCluster.start(options.withFaults(new FaultConfig(0.2, 0.2, 0.2, 3_000_000, 3))))
        {
            for (int r = 0; r < rounds.size(); r++)
            {
                final float[][] copy = deepCopy(rounds.get(r));
                cluster.allReduce(copy);
                for (int w = 0; w < workers; w++)
                {
                    assertBitIdentical(copy[w], clean.get(r), "round " + r + " worker " + w);
                }
            }
            assertThat(cluster.counters().sum(WorkerCounter.RETRANSMISSIONS.typeId())).isPositive();
            assertThat(cluster.counters().sum(SwitchCounter.DROP_STALE.typeId())
                + cluster.counters().sum(SwitchCounter.DUPLICATES.typeId())
                + cluster.counters().sum(SwitchCounter.RETRANSMIT_REPLIES.typeId())).isPositive();
        }
    }

    @Test
    void shouldGiveEveryWorkerTheSameSumWhenSwitchAndWorkersRunOnTheirOwnThreads()
    {
        // Regression: the switch once copied later multicast results from the first, already committed, one; with
        // the first worker on another thread consuming (and its ring zeroing) it, later workers got zeros.
        final int workers = 4;
        final int[][] inputs = new int[workers][3000];
        final SplittableRandom random = new SplittableRandom(11);
        final int[] expected = new int[3000];
        for (int w = 0; w < workers; w++)
        {
            for (int i = 0; i < expected.length; i++)
            {
                inputs[w][i] = random.nextInt(1 << 20);
                expected[i] += inputs[w][i];
            }
        }
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(workers).withSlots(4)
            .withThreads(workers + 1, "yield")))
        {
            for (int round = 0; round < 1000; round++)
            {
                final int[][] tensors = new int[workers][];
                for (int w = 0; w < workers; w++)
                {
                    tensors[w] = inputs[w].clone();
                }
                cluster.allReduce(tensors);
                for (int w = 0; w < workers; w++)
                {
                    if (!java.util.Arrays.equals(tensors[w], expected))
                    {
                        fail("round " + round + ": worker " + w + " got a wrong sum");
                    }
                }
            }
        }
    }

    @Test
    void shouldSumInt32TensorsExactlyWithWrapAround()
    {
        final int workers = 4;
        final int length = 10_000;
        final int[][] inputs = new int[workers][length];
        final SplittableRandom random = new SplittableRandom(5);
        final int[] expected = new int[length];
        for (int w = 0; w < workers; w++)
        {
            for (int i = 0; i < length; i++)
            {
                inputs[w][i] = random.nextInt();
                expected[i] += inputs[w][i];
            }
        }
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(workers)
            .withFaults(FaultConfig.lossy(0.05, 9)).withTimeouts(Duration.ofMillis(2), Duration.ofSeconds(30))))
        {
            cluster.allReduce(inputs);
        }
        for (int w = 0; w < workers; w++)
        {
            assertThat(inputs[w]).isEqualTo(expected);
        }
    }

    @Test
    void shouldFailEveryOtherWorkerWithinThePeerTimeoutWhenOneIsKilled()
    {
        final int workers = 4;
        final Duration peerTimeout = Duration.ofMillis(500);
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(workers)
            .withTimeouts(Duration.ofMillis(2), peerTimeout)))
        {
            cluster.kill(3);
            final float[][] inputs = gradients(workers, 100_000, 1);
            final long start = System.nanoTime();
            final List<CompletableFuture<Void>> futures = new ArrayList<>();
            for (int w = 0; w < 3; w++)
            {
                futures.add(cluster.worker(w).allReduceAsync(inputs[w]));
            }
            for (final CompletableFuture<Void> future : futures)
            {
                assertThatThrownBy(future::join)
                    .isInstanceOf(CompletionException.class)
                    .cause()
                    .isInstanceOf(PeerTimeoutException.class)
                    .hasMessageContaining("no aggregation result for 500 ms")
                    .hasMessageContaining("a peer worker is gone")
                    .satisfies(e -> assertThat(((PeerTimeoutException)e).switchAnswers()).isTrue());
            }
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(elapsedMs).as("failure is reported promptly").isLessThan(5_000);
            assertThatThrownBy(() -> cluster.worker(0).allReduce(new float[10]))
                .hasMessageContaining("failed earlier");
        }
    }

    @Test
    void shouldFailEveryWorkerWithinThePeerTimeoutWhenTheSwitchDies()
    {
        final int workers = 4;
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(workers)
            .withTimeouts(Duration.ofMillis(2), Duration.ofMillis(400))))
        {
            final float[][] inputs = gradients(workers, 50_000, 4);
            cluster.allReduce(deepCopy(inputs));
            cluster.killSwitch();
            final long start = System.nanoTime();
            for (int w = 0; w < workers; w++)
            {
                assertThatThrownBy(cluster.worker(w).allReduceAsync(inputs[w])::join)
                    .cause()
                    .isInstanceOf(PeerTimeoutException.class)
                    .hasMessageContaining("no aggregation result for 400 ms")
                    .hasMessageContaining("the switch at in-process endpoint 0")
                    .hasMessageContaining("the switch is gone or unreachable")
                    .satisfies(e -> assertThat(((PeerTimeoutException)e).switchAnswers()).isFalse());
            }
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
        }
    }

    @Test
    void shouldRejectNonFiniteInputNamingTheElementAndSendNothing()
    {
        final int workers = 2;
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(workers)))
        {
            final float[] tensor = new float[1000];
            tensor[777] = Float.NaN;
            assertThatThrownBy(() -> cluster.worker(0).allReduce(tensor))
                .isInstanceOf(InvalidTensorException.class)
                .hasMessageContaining("element 777")
                .hasMessageContaining("NaN")
                .satisfies(ex -> assertThat(((InvalidTensorException)ex).elementIndex()).isEqualTo(777));
            final float[] infinite = new float[10];
            infinite[9] = Float.NEGATIVE_INFINITY;
            assertThatThrownBy(() -> cluster.worker(0).allReduce(infinite))
                .hasMessageContaining("element 9 of the tensor is -Infinity");
            final float[] huge = new float[10];
            huge[4] = 0x1p127f;
            assertThatThrownBy(() -> cluster.worker(0).allReduce(huge))
                .hasMessageContaining("element 4 of the tensor is 1.7014118E38")
                .hasMessageContaining("below 2^127");
            assertThat(cluster.worker(0).counter(WorkerCounter.PACKETS_SENT)).isZero();
            assertThat(cluster.softwareSwitch().counter(SwitchCounter.CONTRIBUTIONS)).isZero();

            // The job stays usable: a bad tensor is the caller's error, not the job's.
            final float[][] good = gradients(workers, 300, 2);
            cluster.allReduce(good);
            assertWithinBound(gradients(workers, 300, 2), good[0]);
        }
    }

    // -------------------------------------------------------------------------------------------------------------

    private static float[][] run(final ClusterOptions options, final float[][] inputs)
    {
        final float[][] tensors = deepCopy(inputs);
        try (LocalCluster cluster = LocalCluster.start(options))
        {
            cluster.allReduce(tensors);
        }
        return tensors;
    }

    /** Gradients whose magnitudes vary by block, from 1e-6 to 1e3, with some exact zeros blocks. */
    static float[][] gradients(final int workers, final int length, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final float[][] tensors = new float[workers][length];
        for (int w = 0; w < workers; w++)
        {
            for (int i = 0; i < length; i++)
            {
                final int block = i / 256;
                final double scale = block % 7 == 6 ? 0 : Math.pow(10, (block % 10) - 6 + (w % 2));
                tensors[w][i] = (float)(random.nextGaussian() * scale);
            }
        }
        return tensors;
    }

    private static float[][] deepCopy(final float[][] inputs)
    {
        final float[][] copy = new float[inputs.length][];
        for (int w = 0; w < inputs.length; w++)
        {
            copy[w] = inputs[w].clone();
        }
        return copy;
    }

    /** Every element within W lane errors (for its block's agreed exponent) plus half an ulp of the exact sum. */
    static void assertWithinBound(final float[][] inputs, final float[] result)
    {
        final long first = SyntheticGradients.firstOutOfBound(result, inputs, 256);
        if (first >= 0)
        {
            double exact = 0;
            for (final float[] input : inputs)
            {
                exact += input[(int)first];
            }
            fail("element " + first + ": " + result[(int)first] + " vs exact " + exact
                + " exceeds the fixed-point bound");
        }
    }

    private static void assertBitIdentical(final float[] actual, final float[] expected, final String what)
    {
        assertThat(actual.length).isEqualTo(expected.length);
        for (int i = 0; i < actual.length; i++)
        {
            if (Float.floatToRawIntBits(actual[i]) != Float.floatToRawIntBits(expected[i]))
            {
                fail(what + ": element " + i + " is " + actual[i] + " but the lossless run gave " + expected[i]);
            }
        }
    }
}
