package org.inagg.services.cli;

import java.util.SplittableRandom;

import org.inagg.fixedpoint.FixedPoint;

/**
 * Deterministic synthetic gradients: Gaussian values whose scale changes from block to block (1e-6 to 1e3, with some
 * all-zero blocks), as real gradients do across layers. Any process can regenerate any worker's tensor from the seed,
 * so separate worker processes can check their result against a double-precision reference.
 */
public final class SyntheticGradients
{
    private SyntheticGradients()
    {
    }

    public static void fill(final float[] tensor, final int worker, final int iteration, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed * 1_000_003L + worker * 7919L + iteration);
        for (int i = 0; i < tensor.length; i++)
        {
            final int block = i >>> 8;
            final double scale = block % 11 == 10 ? 0 : Math.pow(10, (block % 10) - 6);
            tensor[i] = (float)(random.nextGaussian() * scale);
        }
    }

    /** Exact (double) element-wise sum of every worker's tensor of {@code iteration}. */
    public static double[] reference(final int length, final int workers, final int iteration, final long seed)
    {
        final double[] sum = new double[length];
        final float[] tensor = new float[length];
        for (int w = 0; w < workers; w++)
        {
            fill(tensor, w, iteration, seed);
            for (int i = 0; i < length; i++)
            {
                sum[i] += tensor[i];
            }
        }
        return sum;
    }

    /** Largest |result - reference|, and the largest of those relative to the reference's magnitude. */
    public static double[] maxError(final float[] result, final double[] reference)
    {
        double maxAbs = 0;
        double maxRel = 0;
        for (int i = 0; i < result.length; i++)
        {
            final double error = Math.abs(result[i] - reference[i]);
            maxAbs = Math.max(maxAbs, error);
            if (reference[i] != 0)
            {
                maxRel = Math.max(maxRel, error / Math.abs(reference[i]));
            }
        }
        return new double[] {maxAbs, maxRel};
    }

    /** Int32 tensors: uniformly random over the whole int range, so sums wrap as the switch's adders do. */
    public static void fillInts(final int[] tensor, final int worker, final int iteration, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed * 1_000_003L + worker * 7919L + iteration + 17);
        for (int i = 0; i < tensor.length; i++)
        {
            tensor[i] = random.nextInt();
        }
    }

    /** The exact (wrapping) int32 sum of every worker's tensor of {@code iteration}. */
    public static int[] referenceInts(final int length, final int workers, final int iteration, final long seed)
    {
        final int[] sum = new int[length];
        final int[] tensor = new int[length];
        for (int w = 0; w < workers; w++)
        {
            fillInts(tensor, w, iteration, seed);
            for (int i = 0; i < length; i++)
            {
                sum[i] += tensor[i];
            }
        }
        return sum;
    }

    /**
     * Elements of {@code result} farther from the exact sum than the fixed-point bound of docs/protocol.md
     * ({@link FixedPoint#sumErrorBound}) for blocks of {@code lanes} elements, the block exponent being that of the
     * largest input magnitude of the block over all workers.
     */
    public static long outOfBound(final float[] result, final int workers, final int iteration, final long seed,
        final int lanes)
    {
        final float[][] inputs = new float[workers][result.length];
        for (int w = 0; w < workers; w++)
        {
            fill(inputs[w], w, iteration, seed);
        }
        return countOutOfBound(result, inputs, lanes);
    }

    /**
     * The index of the first element of {@code result} (the sum of {@code inputs}, blocks of {@code lanes}) outside
     * the fixed-point bound, or -1 if none is.
     */
    public static long firstOutOfBound(final float[] result, final float[][] inputs, final int lanes)
    {
        for (int start = 0; start < result.length; start += lanes)
        {
            final int end = Math.min(result.length, start + lanes);
            final int exponent = blockExponent(inputs, start, end);
            for (int i = start; i < end; i++)
            {
                if (outside(result, inputs, i, exponent))
                {
                    return i;
                }
            }
        }
        return -1;
    }

    private static long countOutOfBound(final float[] result, final float[][] inputs, final int lanes)
    {
        long outside = 0;
        for (int start = 0; start < result.length; start += lanes)
        {
            final int end = Math.min(result.length, start + lanes);
            final int exponent = blockExponent(inputs, start, end);
            for (int i = start; i < end; i++)
            {
                outside += outside(result, inputs, i, exponent) ? 1 : 0;
            }
        }
        return outside;
    }

    private static int blockExponent(final float[][] inputs, final int start, final int end)
    {
        float maxAbs = 0;
        for (final float[] input : inputs)
        {
            for (int i = start; i < end; i++)
            {
                maxAbs = Math.max(maxAbs, Math.abs(input[i]));
            }
        }
        return FixedPoint.exponentOfMaxMagnitudeBits(Float.floatToRawIntBits(maxAbs));
    }

    private static boolean outside(final float[] result, final float[][] inputs, final int i, final int exponent)
    {
        double exact = 0;
        for (final float[] input : inputs)
        {
            exact += input[i];
        }
        return Math.abs(result[i] - exact) > FixedPoint.sumErrorBound(exponent, inputs.length, result[i]);
    }

    /** CRC-32 of the int tensor, big-endian, as {@link #crc32(float[])}. */
    public static long crc32(final int[] tensor)
    {
        final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(tensor.length * Integer.BYTES);
        bytes.asIntBuffer().put(tensor);
        final java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(bytes.array());
        return crc.getValue();
    }

    /** CRC-32 of the tensor's raw float bits, big-endian: equal results print equal checksums across processes. */
    public static long crc32(final float[] tensor)
    {
        final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(tensor.length * Float.BYTES);
        bytes.asFloatBuffer().put(tensor);
        final java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(bytes.array());
        return crc.getValue();
    }
}
