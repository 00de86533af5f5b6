package org.inagg.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * A CUDA GPU as a {@link ReductionDevice}, through the JCuda driver API: the kernels of
 * {@code src/main/cuda/inagg_kernels.cu} loaded from the shipped PTX ({@link KernelModule}), launched on one
 * non-blocking stream of the device's primary context, so operations are asynchronous and ordered; {@link #fence()}
 * records an event. Every driver error becomes a {@link CudaException} naming the call or kernel and the CUresult.
 * <p>
 * JCuda's classes and native library are touched only when a CudaReducer is opened, so the module loads and runs on
 * machines without a GPU; {@link #open} then fails with a {@link CudaUnavailableException} saying what is missing.
 * Methods are synchronized and make the context current on the calling thread, so any thread may call them.
 */
public final class CudaReducer implements ReductionDevice
{
    private static final int THREADS = 256;
    private static final int MAX_GRID = 4096;

    private final int ordinal;
    private final String name;
    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();
    private final CUstream stream = new CUstream();
    private final KernelModule kernels;
    private final int maxGrid;
    private final ArrayDeque<PendingFree> pendingPointerArrays = new ArrayDeque<>();
    /** Ordinals of the devices whose memory this context may access (cuCtxEnablePeerAccess done). */
    private final Set<Integer> peers = new HashSet<>();
    private String lastKernel = "(none)";
    private boolean closed;

    private record PendingFree(CUdeviceptr pointer, CUevent event)
    {
    }

    private CudaReducer(final int ordinal)
    {
        this.ordinal = ordinal;
        check(JCudaDriver.cuDeviceGet(device, ordinal), "cuDeviceGet(" + ordinal + ")");
        final byte[] nameBytes = new byte[256];
        check(JCudaDriver.cuDeviceGetName(nameBytes, nameBytes.length, device), "cuDeviceGetName");
        int length = 0;
        while (length < nameBytes.length && nameBytes[length] != 0)
        {
            length++;
        }
        this.name = new String(nameBytes, 0, length, java.nio.charset.StandardCharsets.US_ASCII);
        check(JCudaDriver.cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain");
        check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
        final int[] sms = new int[1];
        check(JCudaDriver.cuDeviceGetAttribute(sms, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
            "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
        this.maxGrid = Math.min(MAX_GRID, Math.max(1, sms[0]) * 8);
        check(JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        this.kernels = new KernelModule();
    }

    /**
     * Opens CUDA device {@code ordinal}.
     *
     * @throws CudaUnavailableException if JCuda's native library or the NVIDIA driver cannot be loaded, or there is no
     *                                  such device.
     */
    public static CudaReducer open(final int ordinal)
    {
        final int count = deviceCount();
        if (ordinal < 0 || ordinal >= count)
        {
            throw new CudaUnavailableException("CUDA device " + ordinal + " requested but the driver reports " + count
                + " device(s)", null);
        }
        return new CudaReducer(ordinal);
    }

    /**
     * Number of CUDA devices the driver sees.
     *
     * @throws CudaUnavailableException with the reason when CUDA cannot be used at all (no driver, no devices).
     */
    public static int deviceCount()
    {
        return CudaDriver.deviceCount();
    }

    @Override
    public String describe()
    {
        return "cuda:" + ordinal + " " + name;
    }

    @Override
    public boolean isAsynchronous()
    {
        return true;
    }

    @Override
    public synchronized DeviceBuffer allocate(final long bytes)
    {
        current();
        final CUdeviceptr pointer = new CUdeviceptr();
        check(JCudaDriver.cuMemAlloc(pointer, Math.max(1, bytes)), "cuMemAlloc(" + bytes + " bytes)");
        return new CudaBuffer(this, pointer, bytes, null, null, true);
    }

    @Override
    public synchronized DeviceBuffer allocateHost(final long bytes)
    {
        current();
        final Pointer host = new Pointer();
        check(JCudaDriver.cuMemHostAlloc(host, Math.max(1, bytes),
            JCudaDriver.CU_MEMHOSTALLOC_DEVICEMAP | JCudaDriver.CU_MEMHOSTALLOC_PORTABLE),
            "cuMemHostAlloc(" + bytes + " bytes)");
        final CUdeviceptr mapped = new CUdeviceptr();
        check(JCudaDriver.cuMemHostGetDevicePointer(mapped, host, 0), "cuMemHostGetDevicePointer");
        // JCuda hands out the address only as a direct ByteBuffer (at most 2 GiB); re-view it as a segment of any size.
        final long address = MemorySegment.ofBuffer(host.getByteBuffer(0, Math.min(bytes, 1))).address();
        final MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(bytes);
        return new CudaBuffer(this, mapped, bytes, host, segment, true);
    }

    synchronized void free(final CudaBuffer buffer, final Pointer hostAllocation)
    {
        if (closed)
        {
            return;
        }
        current();
        check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize before freeing " + buffer);
        if (hostAllocation != null)
        {
            check(JCudaDriver.cuMemFreeHost(hostAllocation), "cuMemFreeHost");
        }
        else
        {
            check(JCudaDriver.cuMemFree(buffer.pointer()), "cuMemFree");
        }
    }

    @Override
    public synchronized void copy(final DeviceBuffer source, final DeviceBuffer destination, final long bytes)
    {
        current();
        check(JCudaDriver.cuMemcpyAsync(pointer(destination), pointer(source), bytes, stream), "cuMemcpyAsync");
    }

    @Override
    public synchronized void copyFromHost(final MemorySegment source, final DeviceBuffer destination)
    {
        current();
        if (source.isNative())
        {
            check(JCudaDriver.cuMemcpyHtoDAsync(pointer(destination), Pointer.to(source.asByteBuffer()),
                source.byteSize(), stream), "cuMemcpyHtoDAsync");
        }
        else
        {
            // A heap segment (e.g. MemorySegment.ofArray(float[])) has no address for the driver, and asByteBuffer()
            // refuses arrays other than byte[]: stage it in native memory. The copy goes on this stream (a synchronous
            // cuMemcpyHtoD runs on the legacy default stream, which a non-blocking stream does not wait for, and may
            // return before its DMA is done), and the staging memory is freed once the stream has passed it.
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment staging = arena.allocate(Math.max(1, source.byteSize()), 64)
                    .asSlice(0, source.byteSize());
                MemorySegment.copy(source, 0, staging, 0, source.byteSize());
                check(JCudaDriver.cuMemcpyHtoDAsync(pointer(destination), Pointer.to(staging.asByteBuffer()),
                    staging.byteSize(), stream), "cuMemcpyHtoDAsync");
                check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize (after kernel " + lastKernel + ")");
            }
        }
    }

    @Override
    public synchronized void copyToHost(final DeviceBuffer source, final MemorySegment destination)
    {
        current();
        if (destination.isNative())
        {
            check(JCudaDriver.cuMemcpyDtoHAsync(Pointer.to(destination.asByteBuffer()), pointer(source),
                destination.byteSize(), stream), "cuMemcpyDtoHAsync");
        }
        else
        {
            // As copyFromHost: through native memory, on this stream, then into the heap segment.
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment staging = arena.allocate(Math.max(1, destination.byteSize()), 64)
                    .asSlice(0, destination.byteSize());
                check(JCudaDriver.cuMemcpyDtoHAsync(Pointer.to(staging.asByteBuffer()), pointer(source),
                    staging.byteSize(), stream), "cuMemcpyDtoHAsync");
                check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize (after kernel " + lastKernel + ")");
                MemorySegment.copy(staging, 0, destination, 0, destination.byteSize());
            }
        }
    }

    @Override
    public synchronized void blockExponents(
        final DeviceBuffer floats, final long count, final int blockSize, final DeviceBuffer exponents)
    {
        final long blocks = (count + blockSize - 1) / blockSize;
        launch("inagg_block_exponents", (int)Math.min(blocks, 65_535L * 16),
            Pointer.to(kernelPointer(floats)), Pointer.to(new long[] {count}), Pointer.to(new int[] {blockSize}),
            Pointer.to(kernelPointer(exponents)));
    }

    @Override
    public synchronized void maxExponents(final List<DeviceBuffer> sources, final long count, final DeviceBuffer out)
    {
        final CUdeviceptr array = pointerArray(sources);
        launch("inagg_max_k", grid(count), Pointer.to(array), Pointer.to(new int[] {sources.size()}),
            Pointer.to(new long[] {count}), Pointer.to(kernelPointer(out)));
        releaseAfterQueuedWork(array);
    }

    @Override
    public synchronized void quantize(
        final DeviceBuffer floats, final long count, final BlockScaling scaling, final LaneOrder order,
        final DeviceBuffer lanes)
    {
        scaling.requireCovers(count);
        launch("inagg_quantize", grid(count), Pointer.to(kernelPointer(floats)), Pointer.to(new long[] {count}),
            Pointer.to(new int[] {scaling.blockSize()}), Pointer.to(kernelPointer(scaling.exponents())),
            Pointer.to(new int[] {scaling.headroomBits()}), Pointer.to(new int[] {bigEndian(order)}),
            Pointer.to(kernelPointer(lanes)));
    }

    @Override
    public synchronized void dequantize(
        final DeviceBuffer lanes, final long count, final BlockScaling scaling, final LaneOrder order,
        final DeviceBuffer floats)
    {
        scaling.requireCovers(count);
        launch("inagg_dequantize", grid(count), Pointer.to(kernelPointer(lanes)), Pointer.to(new long[] {count}),
            Pointer.to(new int[] {scaling.blockSize()}), Pointer.to(kernelPointer(scaling.exponents())),
            Pointer.to(new int[] {scaling.headroomBits()}), Pointer.to(new int[] {bigEndian(order)}),
            Pointer.to(kernelPointer(floats)));
    }

    @Override
    public synchronized void sumFloats(final List<DeviceBuffer> sources, final long count, final DeviceBuffer out)
    {
        sum("inagg_sum_k_f32", sources, count, out);
    }

    @Override
    public synchronized void sumInts(final List<DeviceBuffer> sources, final long count, final DeviceBuffer out)
    {
        sum("inagg_sum_k_s32", sources, count, out);
    }

    private void sum(final String kernel, final List<DeviceBuffer> sources, final long count, final DeviceBuffer out)
    {
        final CUdeviceptr array = pointerArray(sources);
        launch(kernel, grid(count), Pointer.to(array), Pointer.to(new int[] {sources.size()}),
            Pointer.to(new long[] {count}), Pointer.to(kernelPointer(out)));
        releaseAfterQueuedWork(array);
    }

    @Override
    public synchronized void reduceAndQuantize(
        final List<DeviceBuffer> sources, final long count, final BlockScaling scaling, final LaneOrder order,
        final DeviceBuffer lanes)
    {
        scaling.requireCovers(count);
        final CUdeviceptr array = pointerArray(sources);
        launch("inagg_reduce_quantize", grid(count), Pointer.to(array), Pointer.to(new int[] {sources.size()}),
            Pointer.to(new long[] {count}), Pointer.to(new int[] {scaling.blockSize()}),
            Pointer.to(kernelPointer(scaling.exponents())), Pointer.to(new int[] {scaling.headroomBits()}),
            Pointer.to(new int[] {bigEndian(order)}), Pointer.to(kernelPointer(lanes)));
        releaseAfterQueuedWork(array);
    }

    @Override
    public synchronized Fence fence()
    {
        current();
        final CUevent event = new CUevent();
        check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        check(JCudaDriver.cuEventRecord(event, stream), "cuEventRecord");
        final String after = lastKernel;
        return new Fence()
        {
            private boolean done;

            @Override
            public boolean isDone()
            {
                synchronized (CudaReducer.this)
                {
                    if (!done)
                    {
                        current();
                        final int result = JCudaDriver.cuEventQuery(event);
                        if (result == CUresult.CUDA_ERROR_NOT_READY)
                        {
                            return false;
                        }
                        finish(result);
                    }
                    return true;
                }
            }

            @Override
            public void await()
            {
                if (!isDone())
                {
                    final int result = JCudaDriver.cuEventSynchronize(event);
                    synchronized (CudaReducer.this)
                    {
                        if (!done)
                        {
                            finish(result);
                        }
                    }
                }
            }

            private void finish(final int result)
            {
                done = true;
                JCudaDriver.cuEventDestroy(event);
                check(result, "work queued up to kernel " + after);
            }
        };
    }

    @Override
    public synchronized void synchronize()
    {
        current();
        check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize (last kernel " + lastKernel + ")");
        drainPointerArrays(true);
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        current();
        JCudaDriver.cuStreamSynchronize(stream);
        drainPointerArrays(true);
        kernels.close();
        JCudaDriver.cuStreamDestroy(stream);
        JCudaDriver.cuDevicePrimaryCtxRelease(device);
        closed = true;
    }

    // ---------------------------------------------------------------------------------------------------------------

    private void launch(final String kernel, final int grid, final NativePointerObject... parameters)
    {
        current();
        drainPointerArrays(false);
        lastKernel = kernel;
        check(JCudaDriver.cuLaunchKernel(kernels.function(kernel), Math.max(1, grid), 1, 1, THREADS, 1, 1, 0, stream,
            Pointer.to(parameters), null), "kernel " + kernel + " (launch)");
    }

    private int grid(final long count)
    {
        return (int)Math.min(maxGrid, (count + THREADS - 1) / THREADS);
    }

    /** A device array of the sources' device pointers, for the k-way kernels. */
    private CUdeviceptr pointerArray(final List<DeviceBuffer> sources)
    {
        if (sources.isEmpty())
        {
            throw new IllegalArgumentException("no source buffers");
        }
        current();
        final CUdeviceptr[] pointers = new CUdeviceptr[sources.size()];
        for (int j = 0; j < pointers.length; j++)
        {
            pointers[j] = kernelPointer(sources.get(j));
        }
        final CUdeviceptr array = new CUdeviceptr();
        check(JCudaDriver.cuMemAlloc(array, (long)pointers.length * Sizeof.POINTER), "cuMemAlloc(pointer array)");
        // On this stream, so the kernel reading the array is ordered after the copy: a synchronous cuMemcpyHtoD from
        // pageable memory may return before its DMA is done, on the legacy stream our non-blocking stream ignores.
        // From pageable memory the call returns once the (JCuda-owned, temporary) source has been staged.
        check(JCudaDriver.cuMemcpyHtoDAsync(array, Pointer.to(pointers), (long)pointers.length * Sizeof.POINTER,
            stream), "cuMemcpyHtoDAsync(pointer array)");
        return array;
    }

    /** Frees a pointer array once the work queued so far (the kernel reading it) is done. */
    private void releaseAfterQueuedWork(final CUdeviceptr array)
    {
        final CUevent event = new CUevent();
        check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        check(JCudaDriver.cuEventRecord(event, stream), "cuEventRecord");
        pendingPointerArrays.add(new PendingFree(array, event));
    }

    private void drainPointerArrays(final boolean all)
    {
        while (!pendingPointerArrays.isEmpty())
        {
            final PendingFree pending = pendingPointerArrays.peek();
            if (!all && JCudaDriver.cuEventQuery(pending.event()) == CUresult.CUDA_ERROR_NOT_READY)
            {
                return;
            }
            pendingPointerArrays.poll();
            JCudaDriver.cuEventDestroy(pending.event());
            JCudaDriver.cuMemFree(pending.pointer());
        }
    }

    /**
     * A buffer's device pointer for a kernel argument: memory of another device (PASSING's device c reads chunk c of
     * every local GPU's gradient) needs peer access from this context, which is enabled here on first use. Pinned
     * host memory is allocated PORTABLE and is mapped in every context already.
     */
    private CUdeviceptr kernelPointer(final DeviceBuffer buffer)
    {
        final CUdeviceptr pointer = pointer(buffer);
        final CudaReducer owner = ((CudaBuffer)buffer).owner();
        if (owner.ordinal != ordinal && buffer.hostSegment().isEmpty() && !peers.contains(owner.ordinal))
        {
            current();
            final int[] canAccess = new int[1];
            check(JCudaDriver.cuDeviceCanAccessPeer(canAccess, device, owner.device), "cuDeviceCanAccessPeer");
            if (canAccess[0] == 0)
            {
                throw new CudaException(describe() + " cannot access the memory of " + owner.describe() + " (no peer "
                    + "access between these GPUs), which a kernel on it was given; copy the buffer over first");
            }
            final int result = JCudaDriver.cuCtxEnablePeerAccess(owner.context, 0);
            if (result != CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            {
                check(result, "cuCtxEnablePeerAccess(" + owner.describe() + ")");
            }
            peers.add(owner.ordinal);
        }
        return pointer;
    }

    private CUdeviceptr pointer(final DeviceBuffer buffer)
    {
        if (buffer instanceof CudaBuffer cuda)
        {
            return cuda.pointer();
        }
        throw new IllegalArgumentException(buffer + " is not CUDA memory; allocate it with this device's allocate or "
            + "allocateHost, or copy it in with copyFromHost");
    }

    private void current()
    {
        if (closed)
        {
            throw new IllegalStateException(describe() + " is closed");
        }
        check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }

    private static int bigEndian(final LaneOrder order)
    {
        return order == LaneOrder.NETWORK ? 1 : 0;
    }

    static void check(final int result, final String what)
    {
        if (result != CUresult.CUDA_SUCCESS)
        {
            throw new CudaException(what + " failed: " + CUresult.stringFor(result));
        }
    }
}
