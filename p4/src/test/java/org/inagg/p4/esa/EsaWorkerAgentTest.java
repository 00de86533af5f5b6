package org.inagg.p4.esa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SystemNanoClock;
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
 * The real {@link WorkerAgent}s (join, float exponent negotiation, int32, retransmission) against the ESA switch and
 * the parameter server over {@link InProcessNetwork}, every agent's duty cycle run in turn on the test thread. Two jobs
 * whose windows (8 + 8) far exceed the pool (4 aggregators), at different priorities: preemption and fallback happen,
 * and the workers take results from the switch and the server alike.
 */
class EsaWorkerAgentTest
{
    private static final int SWITCH = 0;
    private static final int SERVER = 1;
    private static final int LANES = 64;

    private record Worker(WorkerAgent agent, MemorySegment floatsOut, MemorySegment intsOut, AllReduceOperation f,
        AllReduceOperation i)
    {
    }

    private static float floatValue(final int job, final int w, final int k)
    {
        return (float)(((job * 7 + w * 13 + k) % 101) - 50);     // integer-valued: fixed point sums them exactly
    }

    private static int intValue(final int job, final int w, final int k)
    {
        return (job * 1_000_003 + w * 7_919 + k * 31) % 1_000_000 - 500_000;
    }

    @Test
    @Timeout(60)
    void shouldAllReduceExactlyWithRealWorkersWhenJobsShareATinyPool()
    {
        final int[][] peers = {{2, 3, 4}, {5, 6}};
        final int[] priorities = {1, 5};
        final int floats = 3_000;
        final int ints = 2_000;
        final InProcessNetwork network = new InProcessNetwork(7, 1 << 21, 2048);
        final CounterRegistry registry = new CounterRegistry(256);
        final EsaSwitch sw = new EsaSwitch(network.endpoint(SWITCH), registry,
            new EsaSwitchSettings(4, 4, LANES, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER, 64));
        final ParameterServer server = new ParameterServer(network.endpoint(SERVER), registry, 64, 1 << 16);
        final List<Agent> agents = new ArrayList<>(List.of(sw, server));
        final List<Worker> workers = new ArrayList<>();
        final List<int[]> jobOf = new ArrayList<>();
        for (int j = 0; j < peers.length; j++)
        {
            final int job = j + 1;
            final int count = peers[j].length;
            sw.addJob(new EsaJobConfig(job, count, LANES, 8, 0, peers[j], SERVER, 0));
            server.addJob(new ServerJobConfig(job, count, peers[j], SWITCH, false));
            for (int w = 0; w < count; w++)
            {
                final WorkerAgent agent = new WorkerAgent(
                    new WorkerSettings(job, w, count, SWITCH, priorities[j], 5_000_000L, 30_000_000_000L, 20_000_000L,
                        64),
                    network.endpoint(peers[j][w]), FixedPointConverter.best(), SystemNanoClock.INSTANCE, registry, 16);
                final MemorySegment fin = Arena.ofAuto().allocate((long)floats * Float.BYTES);
                final MemorySegment fout = Arena.ofAuto().allocate((long)floats * Float.BYTES);
                final MemorySegment iin = Arena.ofAuto().allocate((long)ints * Integer.BYTES);
                final MemorySegment iout = Arena.ofAuto().allocate((long)ints * Integer.BYTES);
                for (int k = 0; k < floats; k++)
                {
                    fin.setAtIndex(ValueLayout.JAVA_FLOAT, k, floatValue(job, w, k));
                }
                for (int k = 0; k < ints; k++)
                {
                    iin.setAtIndex(ValueLayout.JAVA_INT, k, intValue(job, w, k));
                }
                final AllReduceOperation f = new AllReduceOperation(fin, fout, floats, true);
                final AllReduceOperation i = new AllReduceOperation(iin, iout, ints, false);
                assertThat(agent.submit(f)).isTrue();
                assertThat(agent.submit(i)).isTrue();
                agent.onStart();
                agents.add(agent);
                workers.add(new Worker(agent, fout, iout, f, i));
                jobOf.add(new int[] {job, count});
            }
        }
        while (!workers.stream().allMatch(w -> w.i().completion().isDone() && w.f().completion().isDone()))
        {
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

        for (int n = 0; n < workers.size(); n++)
        {
            final Worker worker = workers.get(n);
            final int job = jobOf.get(n)[0];
            final int count = jobOf.get(n)[1];
            assertThat(worker.f().completion()).isCompleted();
            assertThat(worker.i().completion()).isCompleted();
            for (int k = 0; k < floats; k++)
            {
                float expected = 0;
                for (int w = 0; w < count; w++)
                {
                    expected += floatValue(job, w, k);
                }
                assertThat(worker.floatsOut().getAtIndex(ValueLayout.JAVA_FLOAT, k)).as("job %d float %d", job, k)
                    .isEqualTo(expected);
            }
            for (int k = 0; k < ints; k++)
            {
                int expected = 0;
                for (int w = 0; w < count; w++)
                {
                    expected += intValue(job, w, k);
                }
                assertThat(worker.intsOut().getAtIndex(ValueLayout.JAVA_INT, k)).as("job %d int %d", job, k)
                    .isEqualTo(expected);
            }
        }
        assertThat(sw.counter(EsaCounter.JOINS)).isEqualTo(5);
        assertThat(sw.counter(EsaCounter.COMPLETIONS)).as("blocks summed in the switch").isPositive();
        assertThat(sw.counter(EsaCounter.PREEMPTIONS) + sw.counter(EsaCounter.FALLBACK_COLLISION))
            .as("contention for the pool").isPositive();
        assertThat(server.counter(ServerCounter.COMPLETED)).as("blocks finished by the server").isPositive();
    }
}
