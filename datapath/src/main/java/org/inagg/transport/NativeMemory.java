package org.inagg.transport;

import java.lang.foreign.MemorySegment;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The whole native address space as one segment, so that transports over native buffers (ring buffers, direct byte
 * buffers, DPDK mbufs) can hand out plain addresses as offsets. It has global scope and no bounds beyond the address
 * space: only transports use it, each for memory it owns.
 */
public final class NativeMemory
{
    public static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private NativeMemory()
    {
    }

    /** Address of the byte at {@code index} of an off-heap Agrona buffer. */
    public static long address(final AtomicBuffer buffer, final int index)
    {
        if (buffer.byteArray() != null)
        {
            throw new IllegalArgumentException("buffer is on the heap; transports need off-heap buffers");
        }
        return buffer.addressOffset() + index;
    }
}
