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
    private final CompletableFuture<Void> completion = new CompletableFuture<>();

    public AllReduceOperation(
        final MemorySegment source, final MemorySegment destination, final int elements, final boolean floats)
    {
        this.source = source;
        this.destination = destination;
        this.elements = elements;
        this.floats = floats;
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
