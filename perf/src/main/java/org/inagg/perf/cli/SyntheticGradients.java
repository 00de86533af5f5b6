package org.inagg.perf.cli;

import java.util.SplittableRandom;

/**
 * Deterministic synthetic gradients: Gaussian values whose scale changes from block to block (1e-6 to 1e3, with some
 * all-zero blocks), as real gradients do across layers. Any process can regenerate any worker's tensor from the seed,
 * so separate worker processes can check their result against a double-precision reference.
 */
final class SyntheticGradients
{
    private SyntheticGradients()
    {
    }

    static void fill(final float[] tensor, final int worker, final int iteration, final long seed)
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
    static double[] reference(final int length, final int workers, final int iteration, final long seed)
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
    static double[] maxError(final float[] result, final double[] reference)
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

    /** CRC-32 of the tensor's raw float bits, big-endian: equal results print equal checksums across processes. */
    static long crc32(final float[] tensor)
    {
        final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(tensor.length * Float.BYTES);
        bytes.asFloatBuffer().put(tensor);
        final java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(bytes.array());
        return crc.getValue();
    }
}
