package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SystemNanoClock;
import org.inagg.InvalidTensorException;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerCounter;
import org.inagg.protocol.WorkerSettings;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.wire.InaggHeader.COLLECTIVE_ALL_GATHER;
import static org.inagg.wire.InaggHeader.COLLECTIVE_ALL_REDUCE;
import static org.inagg.wire.InaggHeader.COLLECTIVE_REDUCE_SCATTER;
import static org.inagg.wire.InaggHeader.OP_MAX;
import static org.inagg.wire.InaggHeader.OP_MIN;
import static org.inagg.wire.InaggHeader.OP_SUM;

/**
 * Every collective and op, float32 and int32, through the software switch and four workers on an in-process network:
 * with 5 % loss, as much duplication and reordering on every endpoint (three seeds) the results are bit-identical to a
 * run without faults and to a reference computed here (fixed point per block for float SUM, exact otherwise). Parts
 * have owners {2, 0, 3, 1, 2} (worker 2 owns two) and 37 elements, cut into blocks of 16, 16 and 5 lanes.
 */
class CollectivesLossTest
{
    private static final int JOB = 5;
    private static final int WORKERS = 4;
    private static final int LANES = 16;
    private static final int SLOTS = 4;
    private static final int PART = 37;
    private static final int[] OWNERS = {2, 0, 3, 1, 2};
    private static final int PARTS = OWNERS.length;
    private static final int ELEMENTS = PARTS * PART;
    private static final ValueLayout.OfInt BIG_ENDIAN_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    @ParameterizedTest(name = "{0} {1} floats={2}")
    @CsvSource({
        "0, 0, true", "0, 1, true", "0, 2, true", "0, 0, false", "0, 1, false", "0, 2, false",
        "1, 0, true", "1, 1, true", "1, 2, true", "1, 0, false", "1, 1, false", "1, 2, false",
        "2, 0, true", "2, 0, false"})
    @Timeout(120)
    void shouldGiveTheReferenceBitsWithAndWithoutFaults(final int collective, final int op, final boolean floats)
    {
        final int[][] reference = reference(collective, op, floats);
        assertThat(run(collective, op, floats, FaultConfig.NONE, false)).isDeepEqualTo(reference);
        for (final long seed : new long[] {1, 2, 3})
        {
            assertThat(run(collective, op, floats, FaultConfig.lossy(0.05, seed), false))
                .as("seed %d", seed).isDeepEqualTo(reference);
        }
    }

    @Test
    @Timeout(60)
    void shouldGatherInPlaceAndBroadcastFromOneRoot()
    {
        assertThat(run(COLLECTIVE_ALL_GATHER, OP_SUM, true, FaultConfig.lossy(0.05, 4), true))
            .isDeepEqualTo(reference(COLLECTIVE_ALL_GATHER, OP_SUM, true));
        // A broadcast is an ALL_GATHER whose every part is the root's.
        final int[][] got = runWith(COLLECTIVE_ALL_GATHER, OP_SUM, false, FaultConfig.lossy(0.05, 5), false,
            new int[] {3, 3, 3, 3, 3});
        for (int w = 0; w < WORKERS; w++)
        {
            for (int k = 0; k < ELEMENTS; k++)
            {
                assertThat(got[w][k]).isEqualTo(intInput(3, k));
            }
        }
    }

    @Test
    @Timeout(60)
    void shouldGiveTheAllReducesBitsInTheOwnedPartsOfAFloatReduceScatterWithWholeBlocks()
    {
        // Parts of whole blocks (2 x 16 lanes): the blocks, and so the exponents, are those of the all-reduce.
        final int part = 2 * LANES;
        final Cluster cluster = new Cluster(FaultConfig.NONE);
        final List<MemorySegment> inputs = new ArrayList<>();
        final List<AllReduceOperation> allReduce = new ArrayList<>();
        final List<AllReduceOperation> scatter = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            final MemorySegment in = Arena.ofAuto().allocate((long)WORKERS * part * Float.BYTES);
            for (int k = 0; k < WORKERS * part; k++)
            {
                in.setAtIndex(ValueLayout.JAVA_FLOAT, k, floatInput(w, k));
            }
            inputs.add(in);
            allReduce.add(new AllReduceOperation(in, Arena.ofAuto().allocate(in.byteSize()), WORKERS * part, true));
            scatter.add(new AllReduceOperation(in, Arena.ofAuto().allocate((long)part * Float.BYTES), true,
                COLLECTIVE_REDUCE_SCATTER, OP_SUM, WORKERS, part, new int[] {0, 1, 2, 3}, mine(w, 4)));
        }
        cluster.run(allReduce);
        cluster.run(scatter);
        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(scatter.get(w).destination().toArray(ValueLayout.JAVA_INT)).isEqualTo(allReduce.get(w)
                .destination().asSlice((long)w * part * Float.BYTES, (long)part * Float.BYTES)
                .toArray(ValueLayout.JAVA_INT));
        }
        assertThat(cluster.agents.getLast().counter(WorkerCounter.PAYLOAD_BYTES_SENT)).isPositive();
    }

    @Test
    @Timeout(30)
    void shouldRefuseANaNOfAFloatMinimumBeforeSendingAnything()
    {
        final Cluster cluster = new Cluster(FaultConfig.NONE);
        cluster.join();
        final MemorySegment in = Arena.ofAuto().allocate(8 * Float.BYTES);
        in.setAtIndex(ValueLayout.JAVA_FLOAT, 5, Float.NaN);
        final AllReduceOperation op = new AllReduceOperation(in, in, true, COLLECTIVE_ALL_REDUCE, OP_MIN, 1, 8, null,
            new int[] {0});
        final WorkerAgent agent = cluster.agents.getFirst();
        final long sent = agent.counter(WorkerCounter.PACKETS_SENT);
        agent.submit(op);
        agent.doWork();
        assertThat(op.completion()).isCompletedExceptionally();
        assertThat(op.completion().exceptionNow()).isInstanceOf(InvalidTensorException.class)
            .hasMessageContaining("element 5");
        assertThat(agent.counter(WorkerCounter.PACKETS_SENT)).isEqualTo(sent);
    }

    // -------------------------------------------------------------------------------------------------------------

    private static int[][] run(
        final int collective, final int op, final boolean floats, final FaultConfig faults, final boolean inPlace)
    {
        return runWith(collective, op, floats, faults, inPlace, OWNERS);
    }

    /** Each worker's destination as raw int32 bits. */
    private static int[][] runWith(
        final int collective, final int op, final boolean floats, final FaultConfig faults, final boolean inPlace,
        final int[] owners)
    {
        final Cluster cluster = new Cluster(faults);
        final List<AllReduceOperation> operations = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            final MemorySegment in = Arena.ofAuto().allocate((long)ELEMENTS * Integer.BYTES);
            for (int k = 0; k < ELEMENTS; k++)
            {
                in.setAtIndex(ValueLayout.JAVA_INT, k, floats ? Float.floatToRawIntBits(floatInput(w, k)) : intInput(w, k));
            }
            operations.add(switch (collective)
            {
                case COLLECTIVE_ALL_REDUCE -> new AllReduceOperation(in, Arena.ofAuto().allocate(in.byteSize()), floats,
                    collective, op, 1, ELEMENTS, null, new int[] {0});
                case COLLECTIVE_REDUCE_SCATTER -> new AllReduceOperation(in,
                    Arena.ofAuto().allocate((long)owned(w, owners) * PART * Integer.BYTES), floats, collective, op,
                    PARTS, PART, owners, mine(w, owners));
                default -> new AllReduceOperation(in, inPlace ? in : Arena.ofAuto().allocate(in.byteSize()), floats,
                    collective, op, PARTS, PART, owners, new int[] {0, 1, 2, 3, 4});
            });
        }
        cluster.run(operations);
        if (!faults.isNone())
        {
            assertThat(cluster.agents.stream().mapToLong(a -> a.counter(WorkerCounter.RETRANSMISSIONS)).sum())
                .as("losses were recovered").isPositive();
        }
        final int[][] out = new int[WORKERS][];
        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(operations.get(w).completion()).isCompleted();
            out[w] = operations.get(w).destination().toArray(ValueLayout.JAVA_INT);
        }
        return out;
    }

    /** What each worker should hold, computed without the switch. */
    private static int[][] reference(final int collective, final int op, final boolean floats)
    {
        final int[] full = new int[ELEMENTS];
        for (int k = 0; k < ELEMENTS; k++)
        {
            if (collective == COLLECTIVE_ALL_GATHER)
            {
                final int owner = OWNERS[k / PART];
                full[k] = floats ? Float.floatToRawIntBits(floatInput(owner, k)) : intInput(owner, k);
            }
            else if (floats && op != OP_SUM)
            {
                float v = floatInput(0, k);
                for (int w = 1; w < WORKERS; w++)
                {
                    v = op == OP_MIN ? Math.min(v, floatInput(w, k)) : Math.max(v, floatInput(w, k));
                }
                full[k] = Float.floatToRawIntBits(v);
            }
            else if (!floats)
            {
                int v = intInput(0, k);
                for (int w = 1; w < WORKERS; w++)
                {
                    v = op == OP_MIN ? Math.min(v, intInput(w, k)) : op == OP_MAX ? Math.max(v, intInput(w, k))
                        : v + intInput(w, k);
                }
                full[k] = v;
            }
        }
        if (floats && op == OP_SUM && collective != COLLECTIVE_ALL_GATHER)
        {
            fixedPointSums(full, collective == COLLECTIVE_ALL_REDUCE ? ELEMENTS : PART);
        }
        final int[][] expected = new int[WORKERS][];
        for (int w = 0; w < WORKERS; w++)
        {
            if (collective != COLLECTIVE_REDUCE_SCATTER)
            {
                expected[w] = full.clone();
                continue;
            }
            expected[w] = new int[owned(w, OWNERS) * PART];
            int at = 0;
            for (int p = 0; p < PARTS; p++)
            {
                if (OWNERS[p] == w)
                {
                    System.arraycopy(full, p * PART, expected[w], at, PART);
                    at += PART;
                }
            }
        }
        return expected;
    }

    /** The fixed-point sum of every block (of at most LANES elements within each part), as the protocol makes it. */
    private static void fixedPointSums(final int[] full, final int part)
    {
        final FixedPointConverter converter = FixedPointConverter.best();
        final MemorySegment[] inputs = new MemorySegment[WORKERS];
        for (int w = 0; w < WORKERS; w++)
        {
            inputs[w] = Arena.ofAuto().allocate((long)ELEMENTS * Float.BYTES);
            for (int k = 0; k < ELEMENTS; k++)
            {
                inputs[w].setAtIndex(ValueLayout.JAVA_FLOAT, k, floatInput(w, k));
            }
        }
        final MemorySegment lanes = Arena.ofAuto().allocate((long)LANES * Integer.BYTES);
        final MemorySegment sum = Arena.ofAuto().allocate((long)LANES * Integer.BYTES);
        final MemorySegment out = Arena.ofAuto().allocate((long)LANES * Float.BYTES);
        for (int start = 0; start < ELEMENTS; start += part)
        {
            for (int first = start; first < start + part; first += LANES)
            {
                final int count = Math.min(LANES, start + part - first);
                int exponent = FixedPoint.MIN_EXPONENT;
                for (int w = 0; w < WORKERS; w++)
                {
                    exponent = Math.max(exponent, converter.blockExponent(inputs[w], (long)first * Float.BYTES, count));
                }
                final int shift = FixedPoint.shift(exponent, WORKERS);
                sum.fill((byte)0);
                for (int w = 0; w < WORKERS; w++)
                {
                    converter.quantize(inputs[w], (long)first * Float.BYTES, count, shift, lanes, 0);
                    for (int i = 0; i < count; i++)
                    {
                        sum.setAtIndex(BIG_ENDIAN_INT, i, sum.getAtIndex(BIG_ENDIAN_INT, i)
                            + lanes.getAtIndex(BIG_ENDIAN_INT, i));
                    }
                }
                converter.dequantize(sum, 0, count, shift, out, 0);
                for (int i = 0; i < count; i++)
                {
                    full[first + i] = out.getAtIndex(ValueLayout.JAVA_INT, i);
                }
            }
        }
    }

    private static int owned(final int worker, final int[] owners)
    {
        int n = 0;
        for (final int owner : owners)
        {
            n += owner == worker ? 1 : 0;
        }
        return n;
    }

    private static int[] mine(final int worker, final int[] owners)
    {
        final int[] parts = new int[owners.length];
        int at = 0;
        for (int p = 0; p < owners.length; p++)
        {
            parts[p] = owners[p] == worker ? at++ : -1;
        }
        return parts;
    }

    private static int[] mine(final int worker, final int parts)
    {
        final int[] owners = new int[parts];
        for (int p = 0; p < parts; p++)
        {
            owners[p] = p;
        }
        return mine(worker, owners);
    }

    /** Values over many magnitudes, negative zeros and ties, so MIN, MAX and the exponents are exercised. */
    private static float floatInput(final int worker, final int k)
    {
        final SplittableRandom random = new SplittableRandom(31L * k + worker);
        return switch (random.nextInt(6))
        {
            case 0 -> -0.0f;
            case 1 -> (float)random.nextInt(-3, 4);
            default -> (float)(random.nextDouble(-1, 1) * Math.scalb(1.0, random.nextInt(-20, 20)));
        };
    }

    private static int intInput(final int worker, final int k)
    {
        return new SplittableRandom(17L * k + worker).nextInt();
    }

    /** The software switch (peer 0) and {@link #WORKERS} workers (peers 1..) on one thread. */
    private static final class Cluster
    {
        final List<Agent> all = new ArrayList<>();
        final List<WorkerAgent> agents = new ArrayList<>();

        Cluster(final FaultConfig faults)
        {
            final InProcessNetwork network = new InProcessNetwork(WORKERS + 1, 1 << 20, 2048);
            final CounterRegistry registry = new CounterRegistry(256);
            final SoftwareSwitch sw = new SoftwareSwitch(endpoint(network, 0, faults), registry, 64);
            sw.addJob(new SwitchJobConfig(JOB, WORKERS, SLOTS, LANES));
            all.add(sw);
            for (int w = 0; w < WORKERS; w++)
            {
                final WorkerAgent agent = new WorkerAgent(
                    new WorkerSettings(JOB, w, WORKERS, 0, 0, 1_000_000L, 60_000_000_000L, 20_000_000L, 64),
                    endpoint(network, 1 + w, faults), FixedPointConverter.best(), SystemNanoClock.INSTANCE, registry,
                    16);
                agent.onStart();
                agents.add(agent);
                all.add(agent);
            }
        }

        void join()
        {
            while (!agents.stream().allMatch(a -> a.joined().isDone()))
            {
                cycle();
            }
        }

        void run(final List<AllReduceOperation> operations)
        {
            for (int w = 0; w < WORKERS; w++)
            {
                assertThat(agents.get(w).submit(operations.get(w))).isTrue();
            }
            while (!operations.stream().allMatch(o -> o.completion().isDone()))
            {
                cycle();
            }
            for (final AllReduceOperation operation : operations)
            {
                assertThat(operation.completion()).isCompleted();
            }
        }

        private void cycle()
        {
            for (final Agent agent : all)
            {
                try
                {
                    agent.doWork();
                }
                catch (final Exception e)
                {
                    throw new AssertionError(e);
                }
            }
        }

        private static Transport endpoint(final InProcessNetwork network, final int peer, final FaultConfig faults)
        {
            final Transport endpoint = network.endpoint(peer);
            return faults.isNone() ? endpoint : new FaultInjectingTransport(endpoint,
                new FaultConfig(faults.dropRate(), faults.duplicateRate(), faults.reorderRate(), faults.maxDelayNs(),
                    faults.seed() * 131 + peer));
        }
    }
}
