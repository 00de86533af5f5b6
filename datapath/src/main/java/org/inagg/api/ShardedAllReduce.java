package org.inagg.api;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.inagg.InaggException;
import org.inagg.InvalidTensorException;
import org.inagg.fixedpoint.FixedPointConverter;

/**
 * One worker's all-reduce over several jobs, each summing its own contiguous shard of the tensor: the model split of a
 * multi-PS plan (InArt: PS {@code j} aggregates the fraction {@code shares[j]} of every gradient, through whichever
 * switches the plan placed in front of it). Every worker must use the same shares, in the same job order.
 * <pre>
 *   tensor  |---- shard 0 (job 0) ----|------- shard 1 (job 1) -------|-- shard 2 (job 2) --|
 *           0                        b1                               b2                    n
 *   b_j = round((shares[0] + ... + shares[j-1]) * blocks) * lanes, blocks = ceil(n / lanes)
 * </pre>
 * Shard boundaries fall on whole packets ({@code lanes}, the jobs' common lanes per packet), so every shard's packets
 * hold exactly the blocks of an unsharded job over the same tensor: with the same exponents per block, the result is
 * bit-identical to the single-job all-reduce. A float tensor is checked for NaN, infinities and magnitudes of 2^127 or
 * more before any shard is submitted, so an invalid tensor sends nothing on any job.
 */
public final class ShardedAllReduce implements AutoCloseable
{
    private final List<AllReduceJob> jobs;
    private final double[] cumulative;

    /**
     * @param jobs   one joined job per shard, in shard order.
     * @param shares each shard's fraction of the tensor (non-negative, normalised here; at least one positive).
     */
    public ShardedAllReduce(final List<AllReduceJob> jobs, final double[] shares)
    {
        if (jobs.isEmpty() || jobs.size() != shares.length)
        {
            throw new IllegalArgumentException(jobs.size() + " jobs for " + shares.length + " shares; need one job per "
                + "share and at least one");
        }
        double total = 0;
        for (final double share : shares)
        {
            if (!(share >= 0) || Double.isInfinite(share))
            {
                throw new IllegalArgumentException("shares must be finite and non-negative, got "
                    + Arrays.toString(shares));
            }
            total += share;
        }
        if (!(total > 0))
        {
            throw new IllegalArgumentException("at least one share must be positive, got " + Arrays.toString(shares));
        }
        this.jobs = List.copyOf(jobs);
        this.cumulative = new double[shares.length + 1];
        for (int j = 0; j < shares.length; j++)
        {
            cumulative[j + 1] = cumulative[j] + shares[j] / total;
        }
        cumulative[shares.length] = 1.0;
    }

    /** The jobs, in shard order. */
    public List<AllReduceJob> jobs()
    {
        return jobs;
    }

    /**
     * First element of every shard of a tensor of {@code elements} elements, and {@code elements} last (length = jobs
     * + 1); shard {@code j} is {@code [b[j], b[j + 1])}, possibly empty.
     */
    public long[] boundaries(final long elements)
    {
        final int lanes = lanesPerPacket();
        final long blocks = (elements + lanes - 1) / lanes;
        final long[] b = new long[jobs.size() + 1];
        for (int j = 1; j < jobs.size(); j++)
        {
            b[j] = Math.max(b[j - 1], Math.min(elements, Math.round(cumulative[j] * blocks) * lanes));
        }
        b[jobs.size()] = elements;
        return b;
    }

    /** Replaces {@code data} with the sum of every worker's {@code data}. */
    public void allReduce(final float[] data)
    {
        await(allReduceAsync(MemorySegment.ofArray(data), MemorySegment.ofArray(data), ElementType.FLOAT32));
    }

    /** Replaces {@code data} with the sum of every worker's {@code data} (exact, wrapping). */
    public void allReduce(final int[] data)
    {
        await(allReduceAsync(MemorySegment.ofArray(data), MemorySegment.ofArray(data), ElementType.INT32));
    }

    /** The sum over every worker of {@code source} into {@code destination}, shard by shard on the shards' jobs. */
    public CompletableFuture<Void> allReduceAsync(
        final MemorySegment source, final MemorySegment destination, final ElementType type)
    {
        if (source.byteSize() % Integer.BYTES != 0 || source.byteSize() != destination.byteSize())
        {
            throw new InvalidTensorException("source (" + source.byteSize() + " bytes) and destination ("
                + destination.byteSize() + " bytes) must be the same whole number of 4-byte elements", -1);
        }
        final long elements = source.byteSize() / Integer.BYTES;
        if (type == ElementType.FLOAT32)
        {
            final long bad = FixedPointConverter.firstNonFinite(source, 0, elements);
            if (bad >= 0)
            {
                throw new InvalidTensorException("element " + bad + " of the tensor is "
                    + source.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, bad) + "; gradients must be finite and below"
                    + " 2^127 in magnitude. Nothing of this tensor was sent on any shard.", bad);
            }
        }
        final long[] b = boundaries(elements);
        final CompletableFuture<?>[] shards = new CompletableFuture<?>[jobs.size()];
        for (int j = 0; j < jobs.size(); j++)
        {
            final long from = b[j] * Integer.BYTES;
            final long bytes = (b[j + 1] - b[j]) * Integer.BYTES;
            shards[j] = bytes == 0 ? CompletableFuture.completedFuture(null) : jobs.get(j).allReduceAsync(
                source.asSlice(from, bytes), destination.asSlice(from, bytes), type);
        }
        return CompletableFuture.allOf(shards);
    }

    /** Closes every job. */
    @Override
    public void close()
    {
        for (final AllReduceJob job : jobs)
        {
            job.close();
        }
    }

    private int lanesPerPacket()
    {
        final int lanes = jobs.getFirst().elementsPerPacket();
        for (final AllReduceJob job : jobs)
        {
            if (job.elementsPerPacket() != lanes)
            {
                throw new InaggException("the shards' jobs carry different lanes per packet (" + lanes + " and "
                    + job.elementsPerPacket() + "); shard boundaries need one block size");
            }
        }
        return lanes;
    }

    private static void await(final CompletableFuture<Void> future)
    {
        try
        {
            future.join();
        }
        catch (final CompletionException | CancellationException ex)
        {
            if (ex.getCause() instanceof RuntimeException cause)
            {
                throw cause;
            }
            throw ex;
        }
    }
}
