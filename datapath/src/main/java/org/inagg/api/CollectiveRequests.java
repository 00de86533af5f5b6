package org.inagg.api;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.inagg.protocol.AllReduceOperation;
import org.inagg.wire.InaggHeader;

/**
 * The checks a collective's arguments pass before anything is sent, and the {@link AllReduceOperation} they make. Each
 * refusal is an {@link IllegalArgumentException} naming the collective, the job and worker and the sizes; nothing is
 * sent and no buffer is touched. Every worker of a job must call the same collectives with the same sizes, parts and
 * owners: that is how they agree, packet by packet, on what the switch does.
 */
final class CollectiveRequests
{
    private final int jobId;
    private final int workerId;
    private final int workers;

    CollectiveRequests(final int jobId, final int workerId, final int workers)
    {
        this.jobId = jobId;
        this.workerId = workerId;
        this.workers = workers;
    }

    AllReduceOperation allReduce(
        final MemorySegment source, final MemorySegment destination, final ElementType type, final ReduceOp op)
    {
        final String name = "all-reduce";
        final long elements = elements(name, "source", source, type, op);
        require(name, elements(name, "destination", destination, type, op) == elements, "source has " + elements
            + " elements but destination has " + destination.byteSize() / Integer.BYTES);
        writable(name, destination);
        return new AllReduceOperation(source, destination, type == ElementType.FLOAT32,
            InaggHeader.COLLECTIVE_ALL_REDUCE, op.wire(), 1, (int)elements, null, new int[] {0});
    }

    /** Source: {@code partOwners.length x partElements}; destination: the parts this worker owns, in part order. */
    AllReduceOperation reduceScatter(
        final MemorySegment source, final MemorySegment destination, final ElementType type, final ReduceOp op,
        final long partElements, final int[] partOwners)
    {
        final String name = "reduce-scatter";
        final long elements = elements(name, "source", source, type, op);
        final long received = elements(name, "destination", destination, type, op);
        owners(name, partOwners);
        final int parts = partOwners.length;
        require(name, partElements >= 0 && elements == parts * partElements, "source has " + elements
            + " elements but " + parts + " parts x " + partElements + " elements = " + parts * partElements);
        final int[] destinationParts = new int[parts];
        int owned = 0;
        for (int p = 0; p < parts; p++)
        {
            destinationParts[p] = partOwners[p] == workerId ? owned++ : -1;
        }
        require(name, received == owned * partElements, "destination has " + received + " elements but this worker "
            + "owns " + owned + " parts x " + partElements + " elements = " + owned * partElements);
        writable(name, destination);
        return new AllReduceOperation(source, destination, type == ElementType.FLOAT32,
            InaggHeader.COLLECTIVE_REDUCE_SCATTER, op.wire(), parts, (int)partElements, partOwners.clone(),
            destinationParts);
    }

    /** In place: {@code data} is {@code partOwners.length x partElements}, this worker's owned parts filled. */
    AllReduceOperation allGather(
        final MemorySegment data, final ElementType type, final long partElements, final int[] partOwners)
    {
        return gather("all-gather", data, type, partElements, partOwners);
    }

    AllReduceOperation broadcast(final MemorySegment data, final ElementType type, final int root)
    {
        final String name = "broadcast";
        require(name, root >= 0 && root < workers, "root " + root + " is not a worker id of a job of " + workers
            + " workers (0.." + (workers - 1) + ")");
        return gather(name, data, type, elements(name, "data", data, type, ReduceOp.SUM), new int[] {root});
    }

    /** Throws unless {@code all} holds {@code workers} times the elements of {@code mine}. */
    void requireGatherSizes(final MemorySegment mine, final MemorySegment all, final ElementType type)
    {
        final String name = "all-gather";
        final long n = elements(name, "source", mine, type, ReduceOp.SUM);
        final long total = elements(name, "destination", all, type, ReduceOp.SUM);
        require(name, total == workers * n, "destination has " + total + " elements but " + workers + " workers x "
            + n + " source elements = " + workers * n);
        writable(name, all);
    }

    /** Throws unless {@code source} holds {@code workers} times the elements of {@code destination}. */
    long requireScatterSizes(final MemorySegment source, final MemorySegment destination, final ElementType type,
        final ReduceOp op)
    {
        final String name = "reduce-scatter";
        final long elements = elements(name, "source", source, type, op);
        final long part = elements(name, "destination", destination, type, op);
        require(name, elements == workers * part, "source has " + elements + " elements but " + workers
            + " workers x " + part + " destination elements = " + workers * part);
        return part;
    }

    /** The owners of the simple forms: worker w owns part w. */
    int[] ownerPerWorker()
    {
        final int[] owners = new int[workers];
        Arrays.setAll(owners, p -> p);
        return owners;
    }

    private AllReduceOperation gather(
        final String name, final MemorySegment data, final ElementType type, final long partElements,
        final int[] partOwners)
    {
        final long elements = elements(name, "data", data, type, ReduceOp.SUM);
        owners(name, partOwners);
        final int parts = partOwners.length;
        require(name, partElements >= 0 && elements == parts * partElements, "data has " + elements
            + " elements but " + parts + " parts x " + partElements + " elements = " + parts * partElements);
        writable(name, data);
        final int[] destinationParts = new int[parts];
        Arrays.setAll(destinationParts, p -> p);
        return new AllReduceOperation(data, data, type == ElementType.FLOAT32, InaggHeader.COLLECTIVE_ALL_GATHER,
            InaggHeader.OP_SUM, parts, (int)partElements, partOwners.clone(), destinationParts);
    }

    /** Elements of a tensor: whole 4-byte elements, within the per-call limit, of the element type's array if any. */
    private long elements(
        final String name, final String what, final MemorySegment segment, final ElementType type, final ReduceOp op)
    {
        require(name, type != null && op != null, "the element type and the reduce op must be given, got " + type
            + " and " + op);
        require(name, segment != null, what + " is null");
        require(name, segment.byteSize() % Integer.BYTES == 0, what + " of " + segment.byteSize()
            + " bytes is not a whole number of 4-byte elements");
        final Object array = segment.heapBase().orElse(null);
        if (array != null && !(array instanceof byte[]) && !(array instanceof float[] && type == ElementType.FLOAT32)
            && !(array instanceof int[] && type == ElementType.INT32))
        {
            require(name, false, "mixed types: " + what + " is a " + array.getClass().getSimpleName()
                + " but the element type is " + type);
        }
        final long elements = segment.byteSize() / Integer.BYTES;
        require(name, elements <= Integer.MAX_VALUE, what + " of " + elements + " elements exceeds the per-call limit"
            + " of " + Integer.MAX_VALUE + "; split it");
        return elements;
    }

    private void owners(final String name, final int[] partOwners)
    {
        require(name, partOwners != null && partOwners.length > 0, "at least one part owner is needed");
        for (int p = 0; p < partOwners.length; p++)
        {
            require(name, partOwners[p] >= 0 && partOwners[p] < workers, "owner " + partOwners[p] + " of part " + p
                + " is not a worker id of a job of " + workers + " workers (0.." + (workers - 1) + ")");
        }
    }

    private void writable(final String name, final MemorySegment destination)
    {
        require(name, !destination.isReadOnly(), "destination is read-only");
    }

    private void require(final String name, final boolean condition, final String problem)
    {
        if (!condition)
        {
            throw new IllegalArgumentException(name + " on job " + jobId + " worker " + workerId + " of " + workers
                + ": " + problem + "; nothing was sent");
        }
    }
}
