package org.inagg.p4.esa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SystemNanoClock;
import org.inagg.SessionChangedException;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerSettings;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Restarted ESA jobs (issue 23): the ESA switch starts a session on a rejoin, frees the job's aggregators and tells the
 * parameter server, which forgets the job's blocks. An aggregator pool smaller than the window, so the server
 * finishes part of every run. Workers are killed (their duty cycle no longer run) and restarted (a new agent on the
 * same address), on one thread, bounded.
 */
class EsaSessionRestartTest
{
    private static final int JOB = 5;
    private static final int SWITCH = 0;
    private static final int SERVER = 1;
    private static final int FIRST_WORKER_PEER = 2;
    private static final int WORKERS = 3;
    private static final int LANES = 64;
    private static final int ELEMENTS = 40_000;
    private static final long PEER_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(2);

    private record Worker(WorkerAgent agent, AllReduceOperation op, MemorySegment out)
    {
    }

    private final InProcessNetwork network = new InProcessNetwork(FIRST_WORKER_PEER + WORKERS, 1 << 20, 2048);
    private final CounterRegistry registry = new CounterRegistry(512);
    private final EsaSwitch sw = new EsaSwitch(network.endpoint(SWITCH), registry,
        new EsaSwitchSettings(8, WORKERS, LANES, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER, 64));
    private final ParameterServer server = new ParameterServer(network.endpoint(SERVER), registry, 64, 64);
    private final List<Agent> agents = new ArrayList<>(List.of(sw, server));

    EsaSessionRestartTest()
    {
        final int[] peers = {FIRST_WORKER_PEER, FIRST_WORKER_PEER + 1, FIRST_WORKER_PEER + 2};
        sw.addJob(new EsaJobConfig(JOB, WORKERS, LANES, 16, 0, peers, SERVER, 0));
        server.addJob(new ServerJobConfig(JOB, WORKERS, peers, SWITCH, false));
    }

    @Test
    @Timeout(90)
    void shouldCompleteExactlyWhenEveryWorkerIsKilledMidRunAndRestartedWithTheSameJobId()
    {
        final List<Worker> first = startAll(1);
        assertThat(runUntil(() -> sw.counter(EsaCounter.CONTRIBUTIONS) > 300
            && server.counter(ServerCounter.RAW_MERGED) + server.counter(ServerCounter.PARTIALS_MERGED) > 0, 20_000))
            .isTrue();
        assertThat(first).as("killed mid-run").noneMatch(w -> w.op().completion().isDone());
        agents.removeAll(first.stream().map(Worker::agent).toList());

        final List<Worker> second = startAll(2);
        final long start = System.nanoTime();
        assertThat(runUntil(() -> second.stream().allMatch(w -> w.op().completion().isDone()), 30_000))
            .as("the restarted job completes").isTrue();
        for (final Worker w : second)
        {
            assertThat(failureOf(w)).isNull();
            for (int k = 0; k < ELEMENTS; k++)
            {
                int expected = 0;
                for (int v = 0; v < WORKERS; v++)
                {
                    expected += value(2, v, k);
                }
                assertThat(w.out().getAtIndex(ValueLayout.JAVA_INT, k)).as("element %d", k).isEqualTo(expected);
            }
        }
        assertThat(sw.counter(EsaCounter.SESSIONS_STARTED)).isEqualTo(1);
        assertThat(server.counter(ServerCounter.SESSIONS_STARTED)).isEqualTo(1);
        System.out.println("ESA job, all " + WORKERS + " workers restarted: the new run completed exactly in "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
    }

    @Test
    @Timeout(60)
    void shouldFailTheOldWorkersNamingTheRestartedOne()
    {
        final List<Worker> first = startAll(1);
        assertThat(runUntil(() -> sw.counter(EsaCounter.CONTRIBUTIONS) > 300, 20_000)).isTrue();
        agents.remove(first.get(1).agent());
        agents.add(worker(1, 2).agent());

        assertThat(runUntil(() -> first.get(0).op().completion().isDone() && first.get(2).op().completion().isDone(),
            10_000)).as("the old workers fail, bounded").isTrue();
        for (final int w : new int[] {0, 2})
        {
            assertThat(failureOf(first.get(w))).isInstanceOf(SessionChangedException.class)
                .hasMessageContaining("worker 1 of job " + JOB + " rejoined as a new process")
                .hasMessageContaining("moved to session 1");
        }
        assertThat(sw.counter(EsaCounter.DROP_STALE_SESSION)).isPositive();
    }

    private List<Worker> startAll(final int seed)
    {
        final List<Worker> all = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            all.add(worker(w, seed));
            agents.add(all.get(w).agent());
        }
        return all;
    }

    private Worker worker(final int id, final int seed)
    {
        final WorkerAgent agent = new WorkerAgent(
            new WorkerSettings(JOB, id, WORKERS, SWITCH, 0, 1_000_000L, PEER_TIMEOUT_NS, 5_000_000L, 64),
            network.endpoint(FIRST_WORKER_PEER + id), FixedPointConverter.best(), SystemNanoClock.INSTANCE, registry,
            4);
        final MemorySegment in = Arena.ofAuto().allocate((long)ELEMENTS * Integer.BYTES);
        final MemorySegment out = Arena.ofAuto().allocate((long)ELEMENTS * Integer.BYTES);
        for (int k = 0; k < ELEMENTS; k++)
        {
            in.setAtIndex(ValueLayout.JAVA_INT, k, value(seed, id, k));
        }
        final AllReduceOperation op = new AllReduceOperation(in, out, ELEMENTS, false);
        assertThat(agent.submit(op)).isTrue();
        agent.onStart();
        return new Worker(agent, op, out);
    }

    private static int value(final int seed, final int worker, final int k)
    {
        return seed * 1_000_003 + worker * 7919 + k * 31;
    }

    /** Runs every agent's duty cycle until {@code done} or the bound; false at the bound. */
    private boolean runUntil(final BooleanSupplier done, final long boundMs)
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

    private static Throwable failureOf(final Worker w)
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
}
