package org.inagg.p4.softswitch;

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
import org.inagg.PeerTimeoutException;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerSettings;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Restarted two-level jobs (issue 23): a first-level switch S sums workers 0 and 1 and sends their sum up to the
 * parameter server, worker 2 sends to the server directly. Workers are killed (their duty cycle no longer run) and
 * restarted (a new agent on the same address, as a new process on the same port would be), on one thread, bounded.
 */
class TwoLevelSessionRestartTest
{
    private static final int JOB = 9;
    private static final int SWITCH = 0;
    private static final int SERVER = 1;
    private static final int FIRST_WORKER_PEER = 2;
    private static final int WORKERS = 3;
    private static final int SLOTS = 16;
    private static final int LANES = 64;
    private static final int ELEMENTS = 40_000;
    private static final long PEER_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(2);

    private record Worker(WorkerAgent agent, AllReduceOperation op, MemorySegment out)
    {
    }

    private final InProcessNetwork network = new InProcessNetwork(FIRST_WORKER_PEER + WORKERS, 1 << 20, 2048);
    private final CounterRegistry registry = new CounterRegistry(512);
    private final SoftwareSwitch sw = new SoftwareSwitch(network.endpoint(SWITCH), registry, 64);
    private final ParameterServer server = new ParameterServer(network.endpoint(SERVER), registry, 64, 2 * SLOTS);
    private final List<Agent> agents = new ArrayList<>(List.of(sw, server));

    TwoLevelSessionRestartTest()
    {
        final int[] peers = {FIRST_WORKER_PEER, FIRST_WORKER_PEER + 1, FIRST_WORKER_PEER + 2};
        sw.addJob(new SwitchJobConfig(JOB, WORKERS, SLOTS, LANES, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, peers), new UpstreamAggregation(SERVER, new int[] {0, 1}));
        server.addJob(new ServerJobConfig(JOB, WORKERS, peers, SWITCH, false, SLOTS, LANES));
    }

    @Test
    @Timeout(90)
    void shouldCompleteExactlyEachTimeEveryWorkerIsKilledMidRunAndRestartedWithTheSameJobId()
    {
        List<Worker> run = startAll(1);
        for (int restart = 1; restart <= 2; restart++)
        {
            final long merged = server.counter(ServerCounter.PARTIALS_MERGED);
            assertThat(runUntil(() -> server.counter(ServerCounter.PARTIALS_MERGED) > merged + 100, 20_000)).isTrue();
            assertThat(run).as("killed mid-run").noneMatch(w -> w.op().completion().isDone());
            agents.removeAll(run.stream().map(Worker::agent).toList());

            run = startAll(1 + restart);
            final List<Worker> restarted = run;
            final long start = System.nanoTime();
            assertThat(runUntil(() -> restarted.stream().allMatch(w -> w.op().completion().isDone()), 30_000))
                .as("restart %d completes", restart).isTrue();
            for (final Worker w : restarted)
            {
                assertThat(failureOf(w)).as("restart %d", restart).isNull();
                assertExact(w, 1 + restart);
            }
            System.out.println("two-level job, all " + WORKERS + " workers restarted (" + restart + "): the new run "
                + "completed exactly in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
            if (restart == 1)
            {
                // the restarted run ran to its end; its processes exit and a next run starts (a session more), to be
                // killed mid-run in its turn
                agents.removeAll(restarted.stream().map(Worker::agent).toList());
                run = startAll(10);
            }
        }
        assertThat(server.counter(ServerCounter.SESSIONS_STARTED)).isPositive();
        assertThat(sw.gauge(SwitchGauge.SESSIONS_STARTED)).as("one per restart, and the run in between").isEqualTo(3);
    }

    @Test
    @Timeout(60)
    void shouldFailEveryWorkerBoundedWhenTheDirectWorkerAloneIsRestartedAndNeverMixTheRuns()
    {
        final List<Worker> first = startAll(1);
        assertThat(runUntil(() -> server.counter(ServerCounter.PARTIALS_MERGED) > 100, 20_000)).isTrue();
        // worker 2 (sending to the server directly) is killed and restarted; workers 0 and 1 go on
        agents.remove(first.get(2).agent());
        final Worker restarted = worker(2, 2);
        agents.add(restarted.agent());

        assertThat(runUntil(() -> first.get(0).op().completion().isDone() && first.get(1).op().completion().isDone()
            && restarted.op().completion().isDone(), 20_000)).as("everyone fails, bounded").isTrue();
        // The server started session 1; the switch, which heard of no rejoin, is still in session 0: its partials
        // are dropped, so its workers time out (a worker hears only its own switch, which answers their probes).
        assertThat(failureOf(first.get(0))).isInstanceOf(PeerTimeoutException.class);
        assertThat(failureOf(first.get(1))).isInstanceOf(PeerTimeoutException.class);
        assertThat(failureOf(restarted)).as("its peers' run is over: no result mixes the two runs")
            .isInstanceOf(PeerTimeoutException.class);
        assertThat(server.counter(ServerCounter.SESSIONS_STARTED)).isEqualTo(1);
        assertThat(server.counter(ServerCounter.DROP_STALE_SESSION)).as("the old run's partials").isPositive();
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
            new WorkerSettings(JOB, id, WORKERS, id < 2 ? SWITCH : SERVER, 0, 1_000_000L, PEER_TIMEOUT_NS,
                5_000_000L, 64),
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

    private static void assertExact(final Worker w, final int seed)
    {
        for (int k = 0; k < ELEMENTS; k++)
        {
            int expected = 0;
            for (int v = 0; v < WORKERS; v++)
            {
                expected += value(seed, v, k);
            }
            assertThat(w.out().getAtIndex(ValueLayout.JAVA_INT, k)).as("element %d", k).isEqualTo(expected);
        }
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
