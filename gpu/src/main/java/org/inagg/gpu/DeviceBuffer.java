package org.inagg.gpu;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * Memory a {@link ReductionDevice} computes on: device memory of a GPU, pinned host memory, or (for the CPU reducer)
 * native host memory. Offsets and sizes are in bytes; element counts given to device operations are in 4-byte
 * elements from the start of the buffer (or slice).
 */
public interface DeviceBuffer extends AutoCloseable
{
    long byteSize();

    /** A view of {@code bytes} bytes from {@code offset}; closing a slice frees nothing. */
    DeviceBuffer slice(long offset, long bytes);

    /** The memory as a host segment, where the host can address it (CPU buffers, pinned host buffers). */
    Optional<MemorySegment> hostSegment();

    /** Frees the memory (not for slices); the device must not be using it. */
    @Override
    void close();

    default long elements()
    {
        return byteSize() / Float.BYTES;
    }

    /** Slice of {@code count} 4-byte elements from element {@code first}. */
    default DeviceBuffer elements(final long first, final long count)
    {
        return slice(first * Float.BYTES, count * Float.BYTES);
    }
}
