package org.inagg.gpu;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A device that reduces and converts gradients in the job's fixed point: a GPU ({@link CudaReducer}) or the CPU
 * ({@link CpuReducer}). The arithmetic is that of {@link org.inagg.fixedpoint.FixedPoint}, lane for lane, so every
 * implementation gives bit-identical results.
 * <p>
 * Operations are queued in order and may return before they are done (a GPU runs them on its stream); results are
 * visible to the host after {@link #fence()}'s {@link Fence#await()} or {@link #synchronize()}. Buffers given to an
 * operation must be this device's, or memory it can address (on CUDA: another buffer of the same context, pinned
 * host memory, or a peer GPU's memory with peer access enabled). Element counts are in 4-byte elements; float and
 * int buffers hold native-order values unless a {@link LaneOrder} says otherwise.
 */
public interface ReductionDevice extends AutoCloseable
{
    /** What this device is, for logs and errors: e.g. "cpu (Vector API, 8 lanes)", "cuda:0 NVIDIA H100". */
    String describe();

    /** True if operations return before they are done (GPU); false if they run on the calling thread. */
    boolean isAsynchronous();

    /** Device memory of {@code bytes} bytes (contents undefined). */
    DeviceBuffer allocate(long bytes);

    /**
     * Host memory of {@code bytes} bytes the device reads and writes directly (page-locked on a GPU), exposed as a
     * {@link MemorySegment} so the datapath can packetize straight from it.
     */
    DeviceBuffer allocateHost(long bytes);

    /** Copies {@code bytes} bytes between two buffers this device can address. */
    void copy(DeviceBuffer source, DeviceBuffer destination, long bytes);

    /** Copies host memory into a buffer. The segment must stay untouched until the copy is fenced. */
    void copyFromHost(MemorySegment source, DeviceBuffer destination);

    /** Copies a buffer into host memory; read the segment only after a fence. */
    void copyToHost(DeviceBuffer source, MemorySegment destination);

    /**
     * {@code exponents[b]} = the exponent of block {@code b} of {@code count} floats in blocks of {@code blockSize}:
     * the smallest {@code e} with every {@code |x| < 2^e}, clamped to [-96, 128], or
     * {@link org.inagg.fixedpoint.FixedPoint#NON_FINITE} if the block holds NaN or an infinity.
     */
    void blockExponents(DeviceBuffer floats, long count, int blockSize, DeviceBuffer exponents);

    /** {@code out[i] = max_j sources_j[i]} over int32 exponent arrays of {@code count} entries. */
    void maxExponents(List<DeviceBuffer> sources, long count, DeviceBuffer out);

    /** {@code lanes[i] = round_half_away(floats[i] * 2^shift)}, shift per block from {@code scaling}. */
    void quantize(DeviceBuffer floats, long count, BlockScaling scaling, LaneOrder order, DeviceBuffer lanes);

    /** {@code floats[i] = (float)lanes[i] * 2^-shift}, shift per block from {@code scaling}. */
    void dequantize(DeviceBuffer lanes, long count, BlockScaling scaling, LaneOrder order, DeviceBuffer floats);

    /** {@code out[i] = ((s0[i] + s1[i]) + s2[i]) + ...} in float, left to right. */
    void sumFloats(List<DeviceBuffer> sources, long count, DeviceBuffer out);

    /** {@code out[i] = s0[i] + s1[i] + ...} in int32, wrapping as the switch's adders do. */
    void sumInts(List<DeviceBuffer> sources, long count, DeviceBuffer out);

    /**
     * Fused reduce and quantize: {@code lanes[i] = sum_j round_half_away(sources_j[i] * 2^shift)} in int32. Each
     * source is quantized with the job-wide exponent before the integer sum, so the result is exactly the sum a
     * switch computes from the sources' packets (summing floats first and quantizing once would not be).
     */
    void reduceAndQuantize(
        List<DeviceBuffer> sources, long count, BlockScaling scaling, LaneOrder order, DeviceBuffer lanes);

    /** A fence after every operation queued so far. */
    Fence fence();

    /** Waits until every queued operation is done. */
    void synchronize();

    @Override
    void close();
}
