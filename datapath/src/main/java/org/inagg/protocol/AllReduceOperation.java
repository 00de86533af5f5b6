package org.inagg.protocol;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * One all-reduce handed to a {@link WorkerAgent}: {@code elements} values of {@code source} (native byte order), summed
 * over the job's workers into {@code destination} (which may be the same memory). The caller must not touch either
 * until {@link #completion()} completes.
 */
public final class AllReduceOperation
{
    private final MemorySegment source;
    private final MemorySegment destination;
    private final int elements;
    private final boolean floats;
    private final float[] sourceArray;
    private final int sourceIndex;
    private final float[] destinationArray;
    private final int destinationIndex;
    private final CompletableFuture<Void> completion = new CompletableFuture<>();

    public AllReduceOperation(
        final MemorySegment source, final MemorySegment destination, final int elements, final boolean floats)
    {
        this.source = source;
        this.destination = destination;
        this.elements = elements;
        this.floats = floats;
        this.sourceArray = floats ? floatArray(source) : null;
        this.sourceIndex = sourceArray != null ? (int)(source.address() >>> 2) : 0;
        this.destinationArray = floats ? floatArray(destination) : null;
        this.destinationIndex = destinationArray != null ? (int)(destination.address() >>> 2) : 0;
    }

    /**
     * The {@code float[]} behind a writable heap segment of whole floats ({@code MemorySegment.ofArray(float[])}, or an
     * aligned slice of one), else null. Resolved here, on the caller's thread, once per all-reduce: the agent thread then
     * converts straight from and into the array, and never asks a segment for it per packet ({@code heapBase()} returns
     * an {@code Optional}).
     */
    private static float[] floatArray(final MemorySegment segment)
    {
        if (segment.isNative() || (segment.address() & (Float.BYTES - 1)) != 0)
        {
            return null;
        }
        return segment.heapBase().orElse(null) instanceof float[] array ? array : null;
    }

    /** The array behind {@link #source()} for a float32 tensor in a {@code float[]}, else null. */
    public float[] sourceArray()
    {
        return sourceArray;
    }

    /** The index in {@link #sourceArray()} of the source's first element. */
    public int sourceIndex()
    {
        return sourceIndex;
    }

    /** The array behind {@link #destination()} for a float32 tensor in a writable {@code float[]}, else null. */
    public float[] destinationArray()
    {
        return destinationArray;
    }

    /** The index in {@link #destinationArray()} of the destination's first element. */
    public int destinationIndex()
    {
        return destinationIndex;
    }

    public MemorySegment source()
    {
        return source;
    }

    public MemorySegment destination()
    {
        return destination;
    }

    public int elements()
    {
        return elements;
    }

    /** True for float32 tensors (fixed point with exponents), false for int32 tensors (summed as they are). */
    public boolean floats()
    {
        return floats;
    }

    public CompletableFuture<Void> completion()
    {
        return completion;
    }
}
