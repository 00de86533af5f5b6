package org.inagg.protocol;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

import org.inagg.wire.InaggHeader;

/**
 * One collective handed to a {@link WorkerAgent}: by default an all-reduce SUM, {@code elements} values of
 * {@code source} (native byte order) summed over the job's workers into {@code destination} (which may be the same
 * memory). The caller must not touch either until {@link #completion()} completes.
 * <p>
 * The general form ({@link #AllReduceOperation(MemorySegment, MemorySegment, boolean, int, int, int, int, int[], int[])})
 * names the collective and the reduce op (the wire's {@code InaggHeader.COLLECTIVE_*} and {@code OP_*}) and cuts the
 * source into {@code parts} parts of {@code partElements} elements, part {@code p} owned by worker
 * {@code partOwners[p]} (see {@link BlockSchedule}: no packet straddles two parts):
 * <pre>
 *   source       |-- part 0 (owner o0) --|-- part 1 (owner o1) --| ... |-- part P-1 --|   P x partElements
 *   destination  part p at destinationParts[p] x partElements, or not received (-1)
 * </pre>
 * An ALL_REDUCE has one part received at 0; a REDUCE_SCATTER receives the parts this worker owns (its destination holds
 * them in part order); an ALL_GATHER sends the parts it owns and receives every part (a full-size destination).
 */
public final class AllReduceOperation
{
    private final MemorySegment source;
    private final MemorySegment destination;
    private final int elements;
    private final boolean floats;
    private final int collective;
    private final int reduceOp;
    private final int parts;
    private final int partElements;
    private final int[] partOwners;
    private final int[] destinationParts;
    private final float[] sourceArray;
    private final int sourceIndex;
    private final float[] destinationArray;
    private final int destinationIndex;
    private final CompletableFuture<Void> completion = new CompletableFuture<>();

    public AllReduceOperation(
        final MemorySegment source, final MemorySegment destination, final int elements, final boolean floats)
    {
        this(source, destination, floats, InaggHeader.COLLECTIVE_ALL_REDUCE, InaggHeader.OP_SUM, 1, elements, null,
            new int[] {0});
    }

    /**
     * A collective over {@code parts x partElements} elements of {@code source}; the caller (the API) has checked the
     * arguments, which the agent trusts.
     *
     * @param collective       {@code InaggHeader.COLLECTIVE_ALL_REDUCE}, {@code _REDUCE_SCATTER} or {@code _ALL_GATHER}.
     * @param reduceOp         {@code InaggHeader.OP_SUM}, {@code OP_MIN} or {@code OP_MAX} (ignored by ALL_GATHER).
     * @param partOwners       the worker id owning each part (length {@code parts}), or null for an ALL_REDUCE.
     * @param destinationParts where each part lands in {@code destination}, in parts, or -1 where it is not received.
     */
    public AllReduceOperation(
        final MemorySegment source, final MemorySegment destination, final boolean floats, final int collective,
        final int reduceOp, final int parts, final int partElements, final int[] partOwners,
        final int[] destinationParts)
    {
        this.source = source;
        this.destination = destination;
        this.elements = parts * partElements;
        this.floats = floats;
        this.collective = collective;
        this.reduceOp = collective == InaggHeader.COLLECTIVE_ALL_GATHER ? InaggHeader.OP_SUM : reduceOp;
        this.parts = parts;
        this.partElements = partElements;
        this.partOwners = partOwners;
        this.destinationParts = destinationParts;
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

    /** True for float32 tensors, false for int32 tensors. */
    public boolean floats()
    {
        return floats;
    }

    /**
     * Whether the lanes are fixed point with block exponents (float32 SUM of an ALL_REDUCE or REDUCE_SCATTER); every
     * other operation travels as INT32 lanes.
     */
    public boolean fixedPoint()
    {
        return floats && reduceOp == InaggHeader.OP_SUM && collective != InaggHeader.COLLECTIVE_ALL_GATHER;
    }

    /** Whether float32 lanes travel as order-preserving int32 keys ({@link OrderedKeys}): MIN or MAX of floats. */
    public boolean orderedKeys()
    {
        return floats && reduceOp != InaggHeader.OP_SUM;
    }

    /** The wire's collective ({@code InaggHeader.COLLECTIVE_*}). */
    public int collective()
    {
        return collective;
    }

    /** The wire's reduce op ({@code InaggHeader.OP_*}); SUM for an ALL_GATHER. */
    public int reduceOp()
    {
        return reduceOp;
    }

    public int parts()
    {
        return parts;
    }

    public int partElements()
    {
        return partElements;
    }

    /** The worker id owning part {@code part}, or -1 for an ALL_REDUCE (no Owner on the wire). */
    public int partOwner(final int part)
    {
        return partOwners == null ? -1 : partOwners[part];
    }

    /** Where part {@code part} lands in the destination, in parts, or -1 if this worker does not receive it. */
    public int destinationPart(final int part)
    {
        return destinationParts[part];
    }

    public CompletableFuture<Void> completion()
    {
        return completion;
    }
}
