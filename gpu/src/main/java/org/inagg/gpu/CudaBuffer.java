package org.inagg.gpu;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * Memory of a {@link CudaReducer}: device memory ({@code cuMemAlloc}) or page-locked, device-mapped host memory
 * ({@code cuMemHostAlloc}), which also has a host {@link MemorySegment} so the datapath packetizes straight from it.
 */
final class CudaBuffer implements DeviceBuffer
{
    private final CudaReducer owner;
    private final CUdeviceptr pointer;
    private final long bytes;
    private final Pointer hostAllocation;
    private final MemorySegment host;
    private final boolean freesOnClose;
    private boolean closed;

    CudaBuffer(
        final CudaReducer owner,
        final CUdeviceptr pointer,
        final long bytes,
        final Pointer hostAllocation,
        final MemorySegment host,
        final boolean freesOnClose)
    {
        this.owner = owner;
        this.pointer = pointer;
        this.bytes = bytes;
        this.hostAllocation = hostAllocation;
        this.host = host;
        this.freesOnClose = freesOnClose;
    }

    CUdeviceptr pointer()
    {
        return pointer;
    }

    CudaReducer owner()
    {
        return owner;
    }

    @Override
    public long byteSize()
    {
        return bytes;
    }

    @Override
    public DeviceBuffer slice(final long offset, final long length)
    {
        if (offset < 0 || length < 0 || offset + length > bytes)
        {
            throw new IndexOutOfBoundsException("slice " + offset + "+" + length + " of a " + bytes + "-byte buffer");
        }
        return new CudaBuffer(owner, pointer.withByteOffset(offset), length, null,
            host == null ? null : host.asSlice(offset, length), false);
    }

    @Override
    public Optional<MemorySegment> hostSegment()
    {
        return Optional.ofNullable(host);
    }

    @Override
    public void close()
    {
        if (freesOnClose && !closed)
        {
            closed = true;
            owner.free(this, hostAllocation);
        }
    }

    @Override
    public String toString()
    {
        return (host != null ? "pinned host" : "device") + " buffer of " + bytes + " bytes on " + owner.describe();
    }
}
