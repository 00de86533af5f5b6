package org.inagg.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;

/** A {@link DeviceBuffer} in host memory: what the CPU reducer computes on, or a wrapper of a caller's segment. */
public final class HostMemoryBuffer implements DeviceBuffer
{
    private final MemorySegment segment;
    private final Arena arena;

    private HostMemoryBuffer(final MemorySegment segment, final Arena arena)
    {
        this.segment = segment;
        this.arena = arena;
    }

    /** Native memory of {@code bytes} bytes, 64-byte aligned, zeroed; freed by {@link #close()}. */
    public static HostMemoryBuffer allocate(final long bytes)
    {
        final Arena arena = Arena.ofShared();
        return new HostMemoryBuffer(arena.allocate(bytes, 64), arena);
    }

    /** Wraps memory the caller owns (a heap array segment works too); closing it frees nothing. */
    public static HostMemoryBuffer wrap(final MemorySegment segment)
    {
        return new HostMemoryBuffer(segment, null);
    }

    public MemorySegment segment()
    {
        return segment;
    }

    @Override
    public long byteSize()
    {
        return segment.byteSize();
    }

    @Override
    public DeviceBuffer slice(final long offset, final long bytes)
    {
        return new HostMemoryBuffer(segment.asSlice(offset, bytes), null);
    }

    @Override
    public Optional<MemorySegment> hostSegment()
    {
        return Optional.of(segment);
    }

    @Override
    public void close()
    {
        if (arena != null)
        {
            arena.close();
        }
    }

    @Override
    public String toString()
    {
        return "HostMemoryBuffer[" + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address()) + "]";
    }
}
