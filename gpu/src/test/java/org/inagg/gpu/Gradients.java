package org.inagg.gpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/** Test gradients: normal-ish values with a per-block magnitude spread, plus halfway and edge cases. */
public final class Gradients
{
    public static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private Gradients()
    {
    }

    public static float[] random(final long seed, final int count, final int blockSize)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final float[] x = new float[count];
        for (int b = 0; b * blockSize < count; b++)
        {
            final int scale = random.nextInt(-30, 20);
            for (int i = b * blockSize; i < Math.min(count, (b + 1) * blockSize); i++)
            {
                final double v = random.nextGaussian() * Math.scalb(1.0, scale);
                x[i] = switch (random.nextInt(40))
                {
                    case 0 -> 0.0f;
                    case 1 -> -0.0f;
                    case 2 -> (float)Math.scalb(0.5 + random.nextInt(8), scale - 20); // halfway after scaling, often
                    case 3 -> Float.MIN_VALUE;
                    default -> (float)v;
                };
            }
        }
        return x;
    }

    public static HostMemoryBuffer buffer(final float[] values)
    {
        final HostMemoryBuffer buffer = HostMemoryBuffer.allocate((long)values.length * Float.BYTES);
        MemorySegment.copy(values, 0, buffer.segment(), FLOAT, 0, values.length);
        return buffer;
    }

    public static HostMemoryBuffer ints(final int[] values)
    {
        final HostMemoryBuffer buffer = HostMemoryBuffer.allocate((long)Math.max(1, values.length) * Integer.BYTES);
        MemorySegment.copy(values, 0, buffer.segment(), INT, 0, values.length);
        return buffer;
    }

    public static float[] floats(final DeviceBuffer buffer, final int count)
    {
        return buffer.hostSegment().orElseThrow().asSlice(0, (long)count * Float.BYTES).toArray(FLOAT);
    }

    public static int[] intsOf(final DeviceBuffer buffer, final int count)
    {
        return buffer.hostSegment().orElseThrow().asSlice(0, (long)count * Integer.BYTES).toArray(INT);
    }

    /**
     * Fails unless {@code actual} has exactly the bits of {@code expected}, naming how many elements differ and the
     * first few with both values (AssertJ's containsExactly diffs in quadratic time: minutes for a million floats).
     */
    public static void assertSameBits(final String what, final float[] expected, final float[] actual)
    {
        assertSameBits(what, expected, actual, i -> "");
    }

    /** As above, with {@code context} describing element i (the inputs that made it) for each mismatch shown. */
    public static void assertSameBits(
        final String what, final float[] expected, final float[] actual,
        final java.util.function.IntFunction<String> context)
    {
        if (expected.length != actual.length)
        {
            throw new AssertionError(what + ": " + actual.length + " elements, expected " + expected.length);
        }
        int differing = 0;
        final StringBuilder first = new StringBuilder();
        for (int i = 0; i < expected.length; i++)
        {
            final int e = Float.floatToRawIntBits(expected[i]);
            final int a = Float.floatToRawIntBits(actual[i]);
            if (e != a)
            {
                if (differing++ < 8)
                {
                    first.append(String.format("%n  [%d] expected %s (0x%08x), got %s (0x%08x)",
                        i, expected[i], e, actual[i], a)).append(context.apply(i));
                }
            }
        }
        if (differing > 0)
        {
            throw new AssertionError(what + ": " + differing + " of " + expected.length
                + " elements differ bit for bit; the first:" + first);
        }
    }
}
