package org.inagg.p4.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SystemNanoClock;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerSettings;
import org.inagg.transport.Transport;

/**
 * Real {@link WorkerAgent}s that a test kills (their duty cycle no longer run) and restarts (a new agent, as a new
 * process would be), every agent's duty cycle run in turn on the test thread: deterministic in order, bounded in time.
 * Each worker all-reduces int32 lanes that depend on a seed, so a restarted run (another seed) has another exact sum.
 */
public final class RestartableWorkers
{
    private RestartableWorkers()
    {
    }

    /** A worker process: its agent, its operation, its output. */
    public record Worker(WorkerAgent agent, AllReduceOperation op, MemorySegment out)
    {
    }

    /**
     * A started worker {@code id} of {@code workers} in job {@code jobId}, sending to {@code sendsTo} from
     * {@code transport}, all-reducing {@code elements} lanes of {@link #value}({@code seed}, id, k).
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public static Worker start(final Transport transport, final CounterRegistry registry, final int jobId,
        final int id, final int workers, final int sendsTo, final long peerTimeoutNs, final int elements,
        final int seed)
    {
        final WorkerAgent agent = new WorkerAgent(
            new WorkerSettings(jobId, id, workers, sendsTo, 0, 1_000_000L, peerTimeoutNs, 5_000_000L, 64),
            transport, FixedPointConverter.best(), SystemNanoClock.INSTANCE, registry, 4);
        final MemorySegment in = Arena.ofAuto().allocate((long)elements * Integer.BYTES);
        final MemorySegment out = Arena.ofAuto().allocate((long)elements * Integer.BYTES);
        for (int k = 0; k < elements; k++)
        {
            in.setAtIndex(ValueLayout.JAVA_INT, k, value(seed, id, k));
        }
        final AllReduceOperation op = new AllReduceOperation(in, out, elements, false);
        assertThat(agent.submit(op)).isTrue();
        agent.onStart();
        return new Worker(agent, op, out);
    }

    public static int value(final int seed, final int worker, final int k)
    {
        return seed * 1_000_003 + worker * 7919 + k * 31;
    }

    /** Runs every agent's duty cycle until {@code done} or the bound; false at the bound. */
    public static boolean runUntil(final List<Agent> agents, final BooleanSupplier done, final long boundMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(boundMs);
        while (!done.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                return false;
            }
            for (final Agent agent : agents)
            {
                try
                {
                    agent.doWork();
                }
                catch (final Exception e)
                {
                    throw new AssertionError(e);
                }
            }
        }
        return true;
    }

    /** Why the worker's operation failed, or null if it completed. */
    public static Throwable failureOf(final Worker w)
    {
        try
        {
            w.op().completion().get(0, TimeUnit.MILLISECONDS);
            return null;
        }
        catch (final ExecutionException | CompletionException e)
        {
            return e.getCause();
        }
        catch (final Exception e)
        {
            return e;
        }
    }

    /**
     * Kills every worker of the first run (still running: none done), starts the second run ({@code start} of seed 2,
     * the same job id) in their place, runs every agent until it is done and asserts its exact result.
     */
    public static void killAllAndRestart(final List<Agent> agents, final List<Worker> first,
        final IntFunction<List<Worker>> start, final int elements)
    {
        assertThat(first).noneMatch(w -> w.op().completion().isDone());
        agents.removeAll(first.stream().map(Worker::agent).toList());
        final List<Worker> second = start.apply(2);
        second.forEach(w -> agents.add(w.agent()));
        assertThat(runUntil(agents, () -> second.stream().allMatch(w -> w.op().completion().isDone()), 60_000))
            .as("the restarted job completes").isTrue();
        assertExact(second, 2, elements);
    }

    /** Asserts that every worker completed with the exact sum of the {@code seed} run of all of them. */
    public static void assertExact(final List<Worker> run, final int seed, final int elements)
    {
        for (final Worker w : run)
        {
            assertThat(failureOf(w)).isNull();
            for (int k = 0; k < elements; k++)
            {
                int expected = 0;
                for (int v = 0; v < run.size(); v++)
                {
                    expected += value(seed, v, k);
                }
                assertThat(w.out().getAtIndex(ValueLayout.JAVA_INT, k)).as("element %d", k).isEqualTo(expected);
            }
        }
    }
}
