package org.inagg.api;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
    private AgentRunner runner;

    private AllReduceJob(final JobContext context)
    {
        this.context = context.conclude();
        this.agent = new WorkerAgent(context.settings(), context.transport(), context.converter(),
            SystemNanoClock.INSTANCE, context.counters(), JobContext.REQUEST_QUEUE_DEFAULT);
    }

    /** Opens the job on a thread of its own and waits until the switch accepted this worker. */
    public static AllReduceJob open(final JobContext context)
    {
        final AllReduceJob job = new AllReduceJob(context);
        job.runner = new AgentRunner(job.context.newIdleStrategy(), AllReduceJob::reportAgentError, null, job.agent);
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
        join(agent.joined(), context.peerTimeout().toMillis() * 2 + 1000);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Blocking

    /** Replaces {@code data} with the sum of every worker's {@code data}. */
    public void allReduce(final float[] data)
    {
        await(allReduceAsync(data));
    }

    public void allReduce(final float[] source, final float[] destination)
    {
        await(allReduceAsync(source, destination));
    }

    public void allReduce(final int[] data)
    {
        await(allReduceAsync(data));
    }

    public void allReduce(final int[] source, final int[] destination)
    {
        await(allReduceAsync(source, destination));
    }

    /** Sums the remaining floats of {@code source} into {@code destination} (positions are not moved). */
    public void allReduce(final FloatBuffer source, final FloatBuffer destination)
    {
        await(allReduceAsync(source, destination));
    }

    /** Sums the float32 (or int32) values of {@code source}, in native byte order, into {@code destination}. */
    public void allReduce(final MemorySegment source, final MemorySegment destination, final ElementType type)
    {
        await(allReduceAsync(source, destination, type));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Asynchronous: the arrays and buffers must not be touched until the future completes.

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
        final AllReduceOperation operation = new AllReduceOperation(source, destination, (int)elements, floats);
        if (!agent.submit(operation))
        {
            throw new InaggException("job " + context.jobId() + " worker " + context.workerId() + ": more than "
                + JobContext.REQUEST_QUEUE_DEFAULT + " all-reduces queued; wait for some to complete");
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

    private void await(final CompletableFuture<Void> future)
    {
        try
        {
            future.join();
        }
        catch (final CompletionException | CancellationException ex)
        {
            throw unwrap(ex);
        }
    }

    private static void join(final CompletableFuture<Void> future, final long timeoutMs)
    {
        try
        {
            future.get(timeoutMs, TimeUnit.MILLISECONDS);
        }
        catch (final ExecutionException ex)
        {
            throw unwrap(ex);
        }
        catch (final TimeoutException ex)
        {
            throw new InaggException("no answer to the join within " + timeoutMs + " ms; is the agent running?", ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new InaggException("interrupted while joining", ex);
        }
    }

    private static RuntimeException unwrap(final Exception ex)
    {
        final Throwable cause = ex.getCause();
        if (cause instanceof InaggException inagg)
        {
            // The agent's own exception, so callers can catch PeerTimeoutException and friends by type.
            return inagg;
        }
        return cause instanceof RuntimeException runtime ? runtime : new InaggException(String.valueOf(cause), cause);
    }

    private static void reportAgentError(final Throwable error)
    {
        System.getLogger(AllReduceJob.class.getName()).log(System.Logger.Level.ERROR, "inagg worker agent error", error);
    }
}
