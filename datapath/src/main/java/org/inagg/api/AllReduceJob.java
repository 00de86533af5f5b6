package org.inagg.api;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.concurrent.CompletableFuture;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SystemNanoClock;
import org.inagg.InaggException;
import org.inagg.InvalidTensorException;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerCounter;

/**
 * One worker's handle on an in-network all-reduce job: what a training system links against.
 * <p>
 * Every worker of the job calls the same sequence of all-reduces with tensors of the same lengths; each call returns
 * (or completes) with the element-wise sum over all workers. Float tensors travel as fixed point with per-block
 * exponents (see {@link org.inagg.fixedpoint.FixedPoint} for the error bound); int32 tensors are summed exactly, with
 * two's-complement wrap-around.
 * <pre>{@code
 * Transport transport = UdpTransport.open(new InetSocketAddress(0),
 *     List.of(new InetSocketAddress("switch-host", 9000)), 1, 1500, 32);
 * try (AllReduceJob job = AllReduceJob.open(new JobContext()
 *         .jobId(7).workerId(rank).workers(worldSize).transport(transport)))
 * {
 *     float[] gradients = model.backward();
 *     job.allReduce(gradients);                 // in place: gradients now hold the sum over all workers
 *     CompletableFuture<Void> f = job.allReduceAsync(moreGradients, summed);
 *     f.join();
 * }
 * }</pre>
 * <h2>Collectives</h2>
 * Beside the all-reduce SUM the job runs, through the same switch slots: an all-reduce with a {@link ReduceOp} (MIN and
 * MAX are exact), a {@code reduceScatter} (each worker receives only the parts it owns: 1/N of the all-reduce's bytes),
 * an {@code allGather} (each worker sends only its parts; every worker receives every part) and a {@code broadcast}
 * (one root's data to every worker). A float32 reduce-scatter SUM gives, in the parts a worker owns, the bits an
 * all-reduce of the same tensor gives when each part is a whole number of packets ({@link #elementsPerPacket()});
 * gathers and broadcasts copy raw bits. Every worker must call the same collectives with the same sizes, parts and
 * owners. Bad arguments (sizes that do not match the parts, an owner or root that is not a worker id, a heap array of
 * the other element type) throw {@link IllegalArgumentException} naming the collective, the worker and the sizes;
 * nothing is sent and no buffer is touched.
 * <pre>{@code
 * float[] shard = new float[n];
 * job.reduceScatter(gradients, shard, ReduceOp.SUM);       // gradients: workers x n; shard: this worker's part summed
 * float[] params = new float[workers * n];
 * job.allGather(shard, params);                            // every worker's shard, in worker order
 * job.broadcast(weights, 0);                               // worker 0's weights everywhere
 * }</pre>
 * Operations run one at a time in submission order on the job's agent, and futures complete on the agent's thread:
 * keep stages chained on them short, or use the {@code *Async} variants of {@code CompletableFuture}. Blocking calls throw
 * {@link org.inagg.PeerTimeoutException} when a participant stops answering, {@link InvalidTensorException} for a NaN
 * or infinite input (nothing of that tensor is sent); after a failure the job is unusable and must be reopened by
 * every worker.
 */
public final class AllReduceJob implements AutoCloseable
{
    private final JobContext context;
    private final WorkerAgent agent;
    private final CollectiveRequests requests;
    private AgentRunner runner;

    private AllReduceJob(final JobContext context)
    {
        this.context = context.conclude();
        this.requests = new CollectiveRequests(context.jobId(), context.workerId(), context.workers());
        this.agent = new WorkerAgent(context.settings(), context.transport(), context.converter(),
            SystemNanoClock.INSTANCE, context.counters(), JobContext.REQUEST_QUEUE_DEFAULT);
    }

    /** Opens the job on a thread of its own and waits until the switch accepted this worker. */
    public static AllReduceJob open(final JobContext context)
    {
        final AllReduceJob job = new AllReduceJob(context);
        job.runner = new AgentRunner(job.context.newIdleStrategy(), error ->
        {
            reportAgentError(error);
            job.agent.onAgentError(error);
        }, null, job.agent);
        AgentRunner.startOnThread(job.runner);
        try
        {
            job.awaitJoined();
        }
        catch (final RuntimeException ex)
        {
            job.close();
            throw ex;
        }
        return job;
    }

    /**
     * Creates the job without a thread: the caller runs {@link #agent()} (an Agrona agent) on a runner or composite of
     * its own, e.g. to put a switch and several workers on one core, then calls {@link #awaitJoined()}.
     */
    public static AllReduceJob create(final JobContext context)
    {
        return new AllReduceJob(context);
    }

    /** The duty-cycle agent that does this worker's work. */
    public Agent agent()
    {
        return agent;
    }

    /** Waits until the switch accepted this worker's join, or throws why it did not. */
    public void awaitJoined()
    {
        JobFutures.join(agent.joined(), context.peerTimeout().toMillis() * 2 + 1000);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Blocking

    /** Replaces {@code data} with the sum of every worker's {@code data}. */
    public void allReduce(final float[] data)
    {
        JobFutures.await(allReduceAsync(data));
    }

    public void allReduce(final float[] source, final float[] destination)
    {
        JobFutures.await(allReduceAsync(source, destination));
    }

    public void allReduce(final int[] data)
    {
        JobFutures.await(allReduceAsync(data));
    }

    public void allReduce(final int[] source, final int[] destination)
    {
        JobFutures.await(allReduceAsync(source, destination));
    }

    /** Sums the remaining floats of {@code source} into {@code destination} (positions are not moved). */
    public void allReduce(final FloatBuffer source, final FloatBuffer destination)
    {
        JobFutures.await(allReduceAsync(source, destination));
    }

    /** Sums the float32 (or int32) values of {@code source}, in native byte order, into {@code destination}. */
    public void allReduce(final MemorySegment source, final MemorySegment destination, final ElementType type)
    {
        JobFutures.await(allReduceAsync(source, destination, type));
    }

    /** Replaces {@code data} with the element-wise {@code op} over every worker's {@code data}. */
    public void allReduce(final float[] data, final ReduceOp op)
    {
        JobFutures.await(allReduceAsync(data, op));
    }

    public void allReduce(final int[] data, final ReduceOp op)
    {
        JobFutures.await(allReduceAsync(data, op));
    }

    /** The element-wise {@code op} over every worker's {@code source} into {@code destination} (native byte order). */
    public void allReduce(
        final MemorySegment source, final MemorySegment destination, final ElementType type, final ReduceOp op)
    {
        JobFutures.await(allReduceAsync(source, destination, type, op));
    }

    /**
     * Reduce-scatter with one part per worker: {@code source} holds {@code workers x destination.length} elements, part
     * {@code w} (elements {@code [w * n, (w + 1) * n)}) belongs to worker {@code w}, and {@code destination} receives
     * this worker's part reduced with {@code op} over every worker.
     *
     * @throws IllegalArgumentException if {@code source.length != workers * destination.length}.
     */
    public void reduceScatter(final float[] source, final float[] destination, final ReduceOp op)
    {
        JobFutures.await(reduceScatterAsync(source, destination, op));
    }

    public void reduceScatter(final int[] source, final int[] destination, final ReduceOp op)
    {
        JobFutures.await(reduceScatterAsync(source, destination, op));
    }

    /** {@link #reduceScatter(float[], float[], ReduceOp)} of memory segments (native byte order). */
    public void reduceScatter(
        final MemorySegment source, final MemorySegment destination, final ElementType type, final ReduceOp op)
    {
        JobFutures.await(reduceScatterAsync(source, destination, type, op));
    }

    /**
     * Reduce-scatter over parts of any owners: {@code source} holds {@code partOwners.length x partElements} elements,
     * part {@code p} owned by worker {@code partOwners[p]}; {@code destination} receives the parts this worker owns,
     * reduced with {@code op} over every worker, one after another in part order ({@code owned x partElements}
     * elements; none if it owns none). A host that speaks for several local ranks owns all their parts.
     *
     * @throws IllegalArgumentException if the sizes do not match the parts, or an owner is not a worker id.
     */
    public void reduceScatter(
        final MemorySegment source, final MemorySegment destination, final ElementType type, final ReduceOp op,
        final long partElements, final int[] partOwners)
    {
        JobFutures.await(reduceScatterAsync(source, destination, type, op, partElements, partOwners));
    }

    /**
     * All-gather with one part per worker: {@code all} ({@code workers x mine.length} elements) receives every worker's
     * {@code mine}, worker {@code w}'s at {@code [w * n, (w + 1) * n)}; raw bits, nothing is reduced.
     *
     * @throws IllegalArgumentException if {@code all.length != workers * mine.length}.
     */
    public void allGather(final float[] mine, final float[] all)
    {
        JobFutures.await(allGatherAsync(mine, all));
    }

    public void allGather(final int[] mine, final int[] all)
    {
        JobFutures.await(allGatherAsync(mine, all));
    }

    /** {@link #allGather(float[], float[])} of memory segments. */
    public void allGather(final MemorySegment mine, final MemorySegment all, final ElementType type)
    {
        JobFutures.await(allGatherAsync(mine, all, type));
    }

    /**
     * All-gather in place over parts of any owners: {@code data} holds {@code partOwners.length x partElements}
     * elements, the caller has filled the parts this worker owns, and every part is then its owner's on every worker.
     *
     * @throws IllegalArgumentException if the size does not match the parts, or an owner is not a worker id.
     */
    public void allGather(
        final MemorySegment data, final ElementType type, final long partElements, final int[] partOwners)
    {
        JobFutures.await(allGatherAsync(data, type, partElements, partOwners));
    }

    /**
     * Replaces {@code data} on every worker with the root's {@code data} (an all-gather of one part owned by the root).
     *
     * @throws IllegalArgumentException if {@code root} is not a worker id.
     */
    public void broadcast(final float[] data, final int root)
    {
        JobFutures.await(broadcastAsync(data, root));
    }

    public void broadcast(final int[] data, final int root)
    {
        JobFutures.await(broadcastAsync(data, root));
    }

    public void broadcast(final MemorySegment data, final ElementType type, final int root)
    {
        JobFutures.await(broadcastAsync(data, type, root));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Asynchronous: the arrays and buffers must not be touched until the future completes.

    public CompletableFuture<Void> allReduceAsync(final float[] data, final ReduceOp op)
    {
        final MemorySegment segment = MemorySegment.ofArray(data);
        return submit(requests.allReduce(segment, segment, ElementType.FLOAT32, op));
    }

    public CompletableFuture<Void> allReduceAsync(final int[] data, final ReduceOp op)
    {
        final MemorySegment segment = MemorySegment.ofArray(data);
        return submit(requests.allReduce(segment, segment, ElementType.INT32, op));
    }

    public CompletableFuture<Void> allReduceAsync(
        final MemorySegment source, final MemorySegment destination, final ElementType type, final ReduceOp op)
    {
        return submit(requests.allReduce(source, destination, type, op));
    }

    public CompletableFuture<Void> reduceScatterAsync(final float[] source, final float[] destination, final ReduceOp op)
    {
        return reduceScatterAsync(MemorySegment.ofArray(source), MemorySegment.ofArray(destination),
            ElementType.FLOAT32, op);
    }

    public CompletableFuture<Void> reduceScatterAsync(final int[] source, final int[] destination, final ReduceOp op)
    {
        return reduceScatterAsync(MemorySegment.ofArray(source), MemorySegment.ofArray(destination), ElementType.INT32,
            op);
    }

    public CompletableFuture<Void> reduceScatterAsync(
        final MemorySegment source, final MemorySegment destination, final ElementType type, final ReduceOp op)
    {
        final long part = requests.requireScatterSizes(source, destination, type, op);
        return reduceScatterAsync(source, destination, type, op, part, requests.ownerPerWorker());
    }

    public CompletableFuture<Void> reduceScatterAsync(
        final MemorySegment source, final MemorySegment destination, final ElementType type, final ReduceOp op,
        final long partElements, final int[] partOwners)
    {
        return submit(requests.reduceScatter(source, destination, type, op, partElements, partOwners));
    }

    public CompletableFuture<Void> allGatherAsync(final float[] mine, final float[] all)
    {
        return allGatherAsync(MemorySegment.ofArray(mine), MemorySegment.ofArray(all), ElementType.FLOAT32);
    }

    public CompletableFuture<Void> allGatherAsync(final int[] mine, final int[] all)
    {
        return allGatherAsync(MemorySegment.ofArray(mine), MemorySegment.ofArray(all), ElementType.INT32);
    }

    /** Copies {@code mine} into this worker's part of {@code all} (once the sizes are checked), then gathers in place. */
    public CompletableFuture<Void> allGatherAsync(final MemorySegment mine, final MemorySegment all, final ElementType type)
    {
        requests.requireGatherSizes(mine, all, type);
        final AllReduceOperation operation = requests.allGather(all, type, mine.byteSize() / Integer.BYTES,
            requests.ownerPerWorker());
        MemorySegment.copy(mine, 0, all, context.workerId() * mine.byteSize(), mine.byteSize());
        return submit(operation);
    }

    public CompletableFuture<Void> allGatherAsync(
        final MemorySegment data, final ElementType type, final long partElements, final int[] partOwners)
    {
        return submit(requests.allGather(data, type, partElements, partOwners));
    }

    public CompletableFuture<Void> broadcastAsync(final float[] data, final int root)
    {
        return broadcastAsync(MemorySegment.ofArray(data), ElementType.FLOAT32, root);
    }

    public CompletableFuture<Void> broadcastAsync(final int[] data, final int root)
    {
        return broadcastAsync(MemorySegment.ofArray(data), ElementType.INT32, root);
    }

    public CompletableFuture<Void> broadcastAsync(final MemorySegment data, final ElementType type, final int root)
    {
        return submit(requests.broadcast(data, type, root));
    }

    public CompletableFuture<Void> allReduceAsync(final float[] data)
    {
        final MemorySegment segment = MemorySegment.ofArray(data);
        return submit(segment, segment, data.length, true);
    }

    public CompletableFuture<Void> allReduceAsync(final float[] source, final float[] destination)
    {
        requireSameLength(source.length, destination.length);
        return submit(MemorySegment.ofArray(source), MemorySegment.ofArray(destination), source.length, true);
    }

    public CompletableFuture<Void> allReduceAsync(final int[] data)
    {
        final MemorySegment segment = MemorySegment.ofArray(data);
        return submit(segment, segment, data.length, false);
    }

    public CompletableFuture<Void> allReduceAsync(final int[] source, final int[] destination)
    {
        requireSameLength(source.length, destination.length);
        return submit(MemorySegment.ofArray(source), MemorySegment.ofArray(destination), source.length, false);
    }

    public CompletableFuture<Void> allReduceAsync(final FloatBuffer source, final FloatBuffer destination)
    {
        return submitBuffers(source, destination, true);
    }

    public CompletableFuture<Void> allReduceAsync(final IntBuffer source, final IntBuffer destination)
    {
        return submitBuffers(source, destination, false);
    }

    public CompletableFuture<Void> allReduceAsync(
        final MemorySegment source, final MemorySegment destination, final ElementType type)
    {
        if (source.byteSize() % Integer.BYTES != 0)
        {
            throw new InvalidTensorException("source segment of " + source.byteSize()
                + " bytes is not a whole number of 4-byte elements", -1);
        }
        requireSameLength(source.byteSize() / Integer.BYTES, destination.byteSize() / Integer.BYTES);
        if (destination.isReadOnly())
        {
            throw new InvalidTensorException("destination segment is read-only", -1);
        }
        return submit(source, destination, source.byteSize() / Integer.BYTES, type == ElementType.FLOAT32);
    }

    private CompletableFuture<Void> submitBuffers(final Buffer source, final Buffer destination, final boolean floats)
    {
        requireSameLength(source.remaining(), destination.remaining());
        if (destination.isReadOnly())
        {
            throw new InvalidTensorException("destination buffer is read-only", -1);
        }
        if ((source instanceof FloatBuffer fs && fs.order() != java.nio.ByteOrder.nativeOrder())
            || (destination instanceof FloatBuffer fd && fd.order() != java.nio.ByteOrder.nativeOrder()))
        {
            throw new InvalidTensorException("float buffers must be in native byte order", -1);
        }
        return submit(MemorySegment.ofBuffer(source), MemorySegment.ofBuffer(destination), source.remaining(), floats);
    }

    private CompletableFuture<Void> submit(
        final MemorySegment source, final MemorySegment destination, final long elements, final boolean floats)
    {
        if (elements > Integer.MAX_VALUE)
        {
            throw new InvalidTensorException("tensor of " + elements + " elements exceeds the per-call limit of "
                + Integer.MAX_VALUE + "; split it", -1);
        }
        return submit(new AllReduceOperation(source, destination, (int)elements, floats));
    }

    private CompletableFuture<Void> submit(final AllReduceOperation operation)
    {
        if (!agent.submit(operation))
        {
            throw new InaggException("job " + context.jobId() + " worker " + context.workerId() + ": more than "
                + JobContext.REQUEST_QUEUE_DEFAULT + " operations queued; wait for some to complete");
        }
        return operation.completion();
    }

    private static void requireSameLength(final long source, final long destination)
    {
        if (source != destination)
        {
            throw new InvalidTensorException("source has " + source + " elements but destination has "
                + destination, -1);
        }
    }

    // ---------------------------------------------------------------------------------------------------------------

    /** Value of one of this worker's counters. */
    public long counter(final WorkerCounter counter)
    {
        return agent.counter(counter);
    }

    /** Lanes per packet of the job (from the switch). */
    public int elementsPerPacket()
    {
        return agent.elementsPerPacket();
    }

    public JobContext context()
    {
        return context;
    }

    @Override
    public void close()
    {
        if (runner != null)
        {
            runner.close();
            runner = null;
        }
    }

    private static void reportAgentError(final Throwable error)
    {
        System.getLogger(AllReduceJob.class.getName()).log(System.Logger.Level.ERROR, "inagg worker agent error", error);
    }
}
