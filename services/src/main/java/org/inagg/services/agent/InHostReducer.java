package org.inagg.services.agent;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
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
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    /** Below this many elements a round is summed on the calling thread only. */
    static final long PARALLEL_THRESHOLD = 1 << 18;
    /** Elements a block: 4 inputs and the result of 8 Ki floats are 160 KiB. */
    private static final long BLOCK = 8192;

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
        return reduce(inputs, out, 0, count, dtype, divisor);
    }

    /**
     * Sums elements {@code [from, to)} of every input into the same elements of {@code out} (a chunk of a round: each
     * element's sum is the same whichever chunks the round is cut into).
     *
     * @return true when every float of the range is finite (always true for int32).
     */
    boolean reduce(final MemorySegment[] inputs, final MemorySegment out, final long from, final long to,
        final int dtype, final int divisor)
    {
        final long count = to - from;
        if (count < PARALLEL_THRESHOLD || helpers == null)
        {
            return range(inputs, out, from, to, dtype, divisor);
        }
        final int lanes = Math.max(FLOATS.length(), INTS.length());
        final long share = (count / threads) / lanes * lanes;
        @SuppressWarnings("unchecked")
        final Future<Boolean>[] parts = new Future[threads - 1];
        for (int t = 1; t < threads; t++)
        {
            final long start = from + share * t;
            final long end = t == threads - 1 ? to : from + share * (t + 1);
            parts[t - 1] = helpers.submit(() -> range(inputs, out, start, end, dtype, divisor));
        }
        boolean finite = range(inputs, out, from, from + share, dtype, divisor);
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
     * Runs the sum loops on a mapped scratch file until the JIT compiled them, so that the first rounds of the first
     * job do not run the Vector API interpreted (hundreds of times slower). The scratch is a mapped file like the jobs'
     * regions: warmed up on native memory instead, the compiled loops profile another segment class and ran 2.5x slower
     * on the mapped regions (5.2 against 2.1 ms a 4-rank sum of 1 Mi floats). About 0.5 s at start.
     */
    static void warmUp()
    {
        // Longer than two blocks, so that every loop of the real rounds is taken (a loop that never looped in the
        // warm-up is compiled as one that never does, and the first real round deoptimizes it).
        final int n = (int)(2 * BLOCK + 1000);
        final long bytes = (long)n * Float.BYTES;
        try
        {
            final Path file = Files.createTempFile("inagg-agent-warmup", ".bin");
            try (FileChannel channel = FileChannel.open(file,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
                Arena arena = Arena.ofShared())
            {
                final MemorySegment mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0,
                    bytes * 9, arena);
                final MemorySegment[] inputs = new MemorySegment[8];
                for (int i = 0; i < inputs.length; i++)
                {
                    inputs[i] = mapping.asSlice(bytes * i, bytes);
                }
                final MemorySegment out = mapping.asSlice(bytes * 8, bytes);
                for (int iteration = 0; iteration < 800; iteration++)
                {
                    final MemorySegment[] some = Arrays.copyOf(inputs, 1 + iteration % inputs.length);
                    range(some, out, 0, n - iteration % 7, AgentProtocol.DTYPE_FLOAT32, 1 + iteration % 2);
                    range(some, out, 0, n - iteration % 7, AgentProtocol.DTYPE_INT32, 1 + iteration % 2);
                }
            }
            finally
            {
                Files.deleteIfExists(file);
            }
        }
        catch (final IOException ex)
        {
            // Not fatal: the loops compile on the first jobs' rounds instead.
            System.getLogger(InHostReducer.class.getName()).log(System.Logger.Level.WARNING,
                "in-host sum warm-up skipped: " + ex);
        }
    }

    /** Divides {@code count} elements of {@code data} in place by {@code divisor} (AVG after the switch stage). */
    static boolean divide(final MemorySegment data, final long count, final int dtype, final int divisor)
    {
        return range(new MemorySegment[] {data}, data, 0, count, dtype, divisor);
    }

    /**
     * Sums elements {@code [from, to)} of the inputs into {@code out}, in rank order ({@code ((s0 + s1) + s2) + ...}).
     * Block by block (a block of every input and of the result stays in the L1/L2 caches), the inputs are folded four
     * at a time by loops of a fixed arity: a loop over a variable number of segments keeps neither its segments'
     * bounds nor their liveness checks out of the loop, and ran 2 to 4 times slower (a 4-rank sum of 1 Mi floats:
     * 2.1 ms against 0.57). Later groups fold onto the result so far; the scale and the finiteness marks are those of the
     * last group.
     */
    static boolean range(final MemorySegment[] s, final MemorySegment out, final long from, final long to,
        final int dtype, final int divisor)
    {
        final boolean floats = dtype == AgentProtocol.DTYPE_FLOAT32;
        final float scale = 1.0f / divisor;
        boolean finite = true;
        for (long block = from; block < to; block += BLOCK)
        {
            final long end = Math.min(to, block + BLOCK);
            // Each group folds up to three more inputs onto the first input, then onto the result so far.
            MemorySegment a = s[0];
            int next = 1;
            do
            {
                final int rest = Math.min(3, s.length - next);
                final boolean last = next + rest == s.length;
                final MemorySegment b = rest > 0 ? s[next] : null;
                final MemorySegment c = rest > 1 ? s[next + 1] : null;
                final MemorySegment d = rest > 2 ? s[next + 2] : null;
                next += rest;
                if (floats)
                {
                    final boolean ok = floats(a, b, c, d, 1 + rest, out, block, end, last ? scale : 1.0f);
                    finite = last ? finite & ok : finite;
                }
                else
                {
                    ints(a, b, c, d, 1 + rest, out, block, end, last ? divisor : 1);
                }
                a = out;
            }
            while (next < s.length);
        }
        return finite;
    }

    private static boolean floats(final MemorySegment a, final MemorySegment b, final MemorySegment c,
        final MemorySegment d, final int arity, final MemorySegment out, final long from, final long to,
        final float scale)
    {
        final int lanes = FLOATS.length();
        final long bound = from + (to - from) / lanes * lanes;
        final boolean finite = switch (arity)
        {
            case 1 -> floats1(a, out, from, bound, scale);
            case 2 -> floats2(a, b, out, from, bound, scale);
            case 3 -> floats3(a, b, c, out, from, bound, scale);
            default -> floats4(a, b, c, d, out, from, bound, scale);
        };
        float mark = 0.0f;
        for (long i = bound; i < to; i++)
        {
            float sum = a.getAtIndex(FLOAT, i);
            sum = arity > 1 ? sum + b.getAtIndex(FLOAT, i) : sum;
            sum = arity > 2 ? sum + c.getAtIndex(FLOAT, i) : sum;
            sum = arity > 3 ? sum + d.getAtIndex(FLOAT, i) : sum;
            sum *= scale;
            mark += sum * 0.0f;
            out.setAtIndex(FLOAT, i, sum);
        }
        return finite && mark == 0.0f;
    }

    // Multiplying by 1.0f changes no float (NaN stays NaN), so the scale is applied unconditionally. A lane times zero
    // is zero exactly when the lane is finite: the marks collect NaN for any infinity or NaN of the result. The kernels
    // return a boolean, not the marks: a vector returned from a loop that is not inlined is boxed on every iteration
    // (measured: 2x slower).

    private static boolean floats1(final MemorySegment a, final MemorySegment out, final long from,
        final long bound, final float scale)
    {
        FloatVector marks = FloatVector.zero(FLOATS);
        for (long i = from; i < bound; i += FLOATS.length())
        {
            final long at = i * Float.BYTES;
            final FloatVector sum = FloatVector.fromMemorySegment(FLOATS, a, at, ORDER).mul(scale);
            marks = marks.add(sum.mul(0.0f));
            sum.intoMemorySegment(out, at, ORDER);
        }
        return !marks.test(VectorOperators.IS_NAN).anyTrue();
    }

    private static boolean floats2(final MemorySegment a, final MemorySegment b, final MemorySegment out,
        final long from, final long bound, final float scale)
    {
        FloatVector marks = FloatVector.zero(FLOATS);
        for (long i = from; i < bound; i += FLOATS.length())
        {
            final long at = i * Float.BYTES;
            final FloatVector sum = FloatVector.fromMemorySegment(FLOATS, a, at, ORDER)
                .add(FloatVector.fromMemorySegment(FLOATS, b, at, ORDER)).mul(scale);
            marks = marks.add(sum.mul(0.0f));
            sum.intoMemorySegment(out, at, ORDER);
        }
        return !marks.test(VectorOperators.IS_NAN).anyTrue();
    }

    private static boolean floats3(final MemorySegment a, final MemorySegment b, final MemorySegment c,
        final MemorySegment out, final long from, final long bound, final float scale)
    {
        FloatVector marks = FloatVector.zero(FLOATS);
        for (long i = from; i < bound; i += FLOATS.length())
        {
            final long at = i * Float.BYTES;
            final FloatVector sum = FloatVector.fromMemorySegment(FLOATS, a, at, ORDER)
                .add(FloatVector.fromMemorySegment(FLOATS, b, at, ORDER))
                .add(FloatVector.fromMemorySegment(FLOATS, c, at, ORDER)).mul(scale);
            marks = marks.add(sum.mul(0.0f));
            sum.intoMemorySegment(out, at, ORDER);
        }
        return !marks.test(VectorOperators.IS_NAN).anyTrue();
    }

    private static boolean floats4(final MemorySegment a, final MemorySegment b, final MemorySegment c,
        final MemorySegment d, final MemorySegment out, final long from, final long bound, final float scale)
    {
        FloatVector marks = FloatVector.zero(FLOATS);
        for (long i = from; i < bound; i += FLOATS.length())
        {
            final long at = i * Float.BYTES;
            final FloatVector sum = FloatVector.fromMemorySegment(FLOATS, a, at, ORDER)
                .add(FloatVector.fromMemorySegment(FLOATS, b, at, ORDER))
                .add(FloatVector.fromMemorySegment(FLOATS, c, at, ORDER))
                .add(FloatVector.fromMemorySegment(FLOATS, d, at, ORDER)).mul(scale);
            marks = marks.add(sum.mul(0.0f));
            sum.intoMemorySegment(out, at, ORDER);
        }
        return !marks.test(VectorOperators.IS_NAN).anyTrue();
    }

    private static void ints(final MemorySegment a, final MemorySegment b, final MemorySegment c,
        final MemorySegment d, final int arity, final MemorySegment out, final long from, final long to,
        final int divisor)
    {
        final int lanes = INTS.length();
        final long bound = from + (to - from) / lanes * lanes;
        switch (arity)
        {
            case 1 -> ints1(a, out, from, bound, divisor);
            case 2 -> ints2(a, b, out, from, bound, divisor);
            case 3 -> ints3(a, b, c, out, from, bound, divisor);
            default -> ints4(a, b, c, d, out, from, bound, divisor);
        }
        for (long i = bound; i < to; i++)
        {
            int sum = a.getAtIndex(INT, i);
            sum = arity > 1 ? sum + b.getAtIndex(INT, i) : sum;
            sum = arity > 2 ? sum + c.getAtIndex(INT, i) : sum;
            sum = arity > 3 ? sum + d.getAtIndex(INT, i) : sum;
            out.setAtIndex(INT, i, divisor != 1 ? sum / divisor : sum);
        }
    }

    private static void ints1(final MemorySegment a, final MemorySegment out, final long from, final long bound,
        final int divisor)
    {
        for (long i = from; i < bound; i += INTS.length())
        {
            final long at = i * Integer.BYTES;
            final IntVector sum = IntVector.fromMemorySegment(INTS, a, at, ORDER);
            (divisor != 1 ? sum.div(divisor) : sum).intoMemorySegment(out, at, ORDER);
        }
    }

    private static void ints2(final MemorySegment a, final MemorySegment b, final MemorySegment out,
        final long from, final long bound, final int divisor)
    {
        for (long i = from; i < bound; i += INTS.length())
        {
            final long at = i * Integer.BYTES;
            final IntVector sum = IntVector.fromMemorySegment(INTS, a, at, ORDER)
                .add(IntVector.fromMemorySegment(INTS, b, at, ORDER));
            (divisor != 1 ? sum.div(divisor) : sum).intoMemorySegment(out, at, ORDER);
        }
    }

    private static void ints3(final MemorySegment a, final MemorySegment b, final MemorySegment c,
        final MemorySegment out, final long from, final long bound, final int divisor)
    {
        for (long i = from; i < bound; i += INTS.length())
        {
            final long at = i * Integer.BYTES;
            final IntVector sum = IntVector.fromMemorySegment(INTS, a, at, ORDER)
                .add(IntVector.fromMemorySegment(INTS, b, at, ORDER))
                .add(IntVector.fromMemorySegment(INTS, c, at, ORDER));
            (divisor != 1 ? sum.div(divisor) : sum).intoMemorySegment(out, at, ORDER);
        }
    }

    private static void ints4(final MemorySegment a, final MemorySegment b, final MemorySegment c,
        final MemorySegment d, final MemorySegment out, final long from, final long bound, final int divisor)
    {
        for (long i = from; i < bound; i += INTS.length())
        {
            final long at = i * Integer.BYTES;
            final IntVector sum = IntVector.fromMemorySegment(INTS, a, at, ORDER)
                .add(IntVector.fromMemorySegment(INTS, b, at, ORDER))
                .add(IntVector.fromMemorySegment(INTS, c, at, ORDER))
                .add(IntVector.fromMemorySegment(INTS, d, at, ORDER));
            (divisor != 1 ? sum.div(divisor) : sum).intoMemorySegment(out, at, ORDER);
        }
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
