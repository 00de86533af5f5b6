package org.inagg.gpu;

import org.inagg.fixedpoint.FixedPoint;

/**
 * How a range of floats maps to fixed point: element {@code i} of the range belongs to block {@code i / blockSize},
 * whose job-wide exponent is int {@code i / blockSize} of {@code exponents}, and is scaled by
 * {@code 2^FixedPoint.shift(exponent, workers)}. A range starting inside the tensor must start on a block boundary,
 * with {@code exponents} sliced to match ({@link #fromBlock}).
 *
 * @param exponents int32 exponents (native order) of the range's blocks, on the device that scales.
 * @param blockSize lanes per block, the job's lanes per packet.
 * @param workers   contributors whose sum must not overflow (sets the headroom bits).
 */
public record BlockScaling(DeviceBuffer exponents, int blockSize, int workers)
{
    public BlockScaling
    {
        if (blockSize < 1)
        {
            throw new IllegalArgumentException("block size must be positive, got " + blockSize);
        }
        if (workers < 1 || workers > FixedPoint.MAX_WORKERS)
        {
            throw new IllegalArgumentException("workers must be in 1.." + FixedPoint.MAX_WORKERS + ", got " + workers);
        }
    }

    public int headroomBits()
    {
        return FixedPoint.headroomBits(workers);
    }

    /** Blocks a range of {@code elements} elements spans. */
    public long blocks(final long elements)
    {
        return (elements + blockSize - 1) / blockSize;
    }

    /** The scaling of the range starting at block {@code block}, {@code blocks} blocks long. */
    public BlockScaling fromBlock(final long block, final long blocks)
    {
        return new BlockScaling(exponents.elements(block, blocks), blockSize, workers);
    }

    /** Checks the exponents cover a range of {@code elements} elements. */
    public void requireCovers(final long elements)
    {
        if (exponents.elements() < blocks(elements))
        {
            throw new IllegalArgumentException(elements + " elements in blocks of " + blockSize + " need "
                + blocks(elements) + " exponents, the buffer holds " + exponents.elements());
        }
    }
}
