package org.inagg.services.agent;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * PASSING's in-host step over shared memory: sums the local ranks' data regions into the result region in one pass
 * (Vector API), optionally scaling for AVG, and finds NaN or infinity in the same pass (a lane times zero is zero
 * exactly when it is finite). The ranks' order is fixed, so the float sum is the same every time for the same inputs.
 * Large rounds are split between the calling thread and {@code threads - 1} helpers: while the agent sums, the ranks
 * wait on their doorbells and leave the cores to it.
 */
final class InHostReducer implements AutoCloseable
{
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    /** Below this many elements a round is summed on the calling thread only. */
    static final long PARALLEL_THRESHOLD = 1 << 18;

    private final int threads;
    private final ExecutorService helpers;

    InHostReducer(final int threads)
    {
        this.threads = Math.max(1, threads);
        this.helpers = this.threads == 1 ? null : Executors.newFixedThreadPool(this.threads - 1, r ->
        {
            final Thread t = new Thread(r, "inagg-agent-reducer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Sums {@code count} elements of every input into {@code out}.
     *
     * @param divisor 1 for SUM, the world size for AVG of a single-host job (floats multiply by its inverse, ints
     *                divide, truncating).
     * @return true when every float of the result is finite (always true for int32).
     */
    boolean reduce(final MemorySegment[] inputs, final MemorySegment out, final long count, final int dtype,
        final int divisor)
    {
        if (count < PARALLEL_THRESHOLD || helpers == null)
        {
            return range(inputs, out, 0, count, dtype, divisor);
        }
        final int lanes = Math.max(FLOATS.length(), INTS.length());
        final long share = (count / threads) / lanes * lanes;
        @SuppressWarnings("unchecked")
        final Future<Boolean>[] parts = new Future[threads - 1];
        for (int t = 1; t < threads; t++)
        {
            final long from = share * t;
            final long to = t == threads - 1 ? count : share * (t + 1);
            parts[t - 1] = helpers.submit(() -> range(inputs, out, from, to, dtype, divisor));
        }
        boolean finite = range(inputs, out, 0, share, dtype, divisor);
        for (final Future<Boolean> part : parts)
        {
            try
            {
                finite &= part.get();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while summing", ex);
            }
            catch (final ExecutionException ex)
            {
                throw new IllegalStateException("in-host sum failed: " + ex.getCause(), ex.getCause());
            }
        }
        return finite;
    }

    /**
     * Runs the sum loops on scratch memory until the JIT compiled them, so that the first rounds of the first job do
     * not run the Vector API interpreted (hundreds of times slower). About 0.2 s at start.
     */
    static void warmUp()
    {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined())
        {
            final int n = 4096;
            final MemorySegment[] inputs = new MemorySegment[4];
            for (int i = 0; i < inputs.length; i++)
            {
                inputs[i] = arena.allocate((long)n * Float.BYTES, 64);
            }
            final MemorySegment out = arena.allocate((long)n * Float.BYTES, 64);
            for (int iteration = 0; iteration < 3000; iteration++)
            {
                final MemorySegment[] some = java.util.Arrays.copyOf(inputs, 1 + iteration % inputs.length);
                range(some, out, 0, n - iteration % 7, AgentProtocol.DTYPE_FLOAT32, 1 + iteration % 2);
                range(some, out, 0, n - iteration % 7, AgentProtocol.DTYPE_INT32, 1 + iteration % 2);
            }
        }
    }

    /** Divides {@code count} elements of {@code data} in place by {@code divisor} (AVG after the switch stage). */
    static boolean divide(final MemorySegment data, final long count, final int dtype, final int divisor)
    {
        return range(new MemorySegment[] {data}, data, 0, count, dtype, divisor);
    }

    static boolean range(final MemorySegment[] s, final MemorySegment out, final long from, final long to,
        final int dtype, final int divisor)
    {
        return dtype == AgentProtocol.DTYPE_FLOAT32
            ? floats(s, out, from, to, 1.0f / divisor)
            : ints(s, out, from, to, divisor);
    }

    private static boolean floats(final MemorySegment[] s, final MemorySegment out, final long from, final long to,
        final float scale)
    {
        final ByteOrder order = ByteOrder.nativeOrder();
        final int lanes = FLOATS.length();
        final long bound = from + (to - from) / lanes * lanes;
        final boolean scaled = scale != 1.0f;
        FloatVector marks = FloatVector.zero(FLOATS);
        long i = from;
        for (; i < bound; i += lanes)
        {
            final long at = i * Float.BYTES;
            FloatVector sum = FloatVector.fromMemorySegment(FLOATS, s[0], at, order);
            for (int j = 1; j < s.length; j++)
            {
                sum = sum.add(FloatVector.fromMemorySegment(FLOATS, s[j], at, order));
            }
            if (scaled)
            {
                sum = sum.mul(scale);
            }
            marks = marks.add(sum.mul(0.0f));
            sum.intoMemorySegment(out, at, order);
        }
        float mark = 0.0f;
        for (; i < to; i++)
        {
            float sum = s[0].getAtIndex(FLOAT, i);
            for (int j = 1; j < s.length; j++)
            {
                sum += s[j].getAtIndex(FLOAT, i);
            }
            if (scaled)
            {
                sum *= scale;
            }
            mark += sum * 0.0f;
            out.setAtIndex(FLOAT, i, sum);
        }
        return mark == 0.0f && !marks.test(VectorOperators.IS_NAN).anyTrue();
    }

    private static boolean ints(final MemorySegment[] s, final MemorySegment out, final long from, final long to,
        final int divisor)
    {
        final ByteOrder order = ByteOrder.nativeOrder();
        final int lanes = INTS.length();
        final long bound = from + (to - from) / lanes * lanes;
        long i = from;
        for (; i < bound; i += lanes)
        {
            final long at = i * Integer.BYTES;
            IntVector sum = IntVector.fromMemorySegment(INTS, s[0], at, order);
            for (int j = 1; j < s.length; j++)
            {
                sum = sum.add(IntVector.fromMemorySegment(INTS, s[j], at, order));
            }
            if (divisor != 1)
            {
                sum = sum.div(divisor);
            }
            sum.intoMemorySegment(out, at, order);
        }
        for (; i < to; i++)
        {
            int sum = s[0].getAtIndex(INT, i);
            for (int j = 1; j < s.length; j++)
            {
                sum += s[j].getAtIndex(INT, i);
            }
            out.setAtIndex(INT, i, divisor != 1 ? sum / divisor : sum);
        }
        return true;
    }

    @Override
    public void close()
    {
        if (helpers != null)
        {
            helpers.shutdownNow();
        }
    }
}
