package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.SystemNanoClock;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerCounter;
import org.inagg.protocol.WorkerSettings;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whole jobs through the software switch on an in-process network, all agents on the test's thread: with congestion
 * control on, a lossy path really cuts the workers' congestion windows (issue 23: the first cut's time test overflowed,
 * so none ever did) and the sums stay exact; off (the default), the window stays the pool; 64 workers whose windows are
 * cut to different sizes complete with exact sums (two full windows once waited for each other's queued packets).
 */
class WorkerScaleAndWindowTest
{
    private static final int JOB = 11;
    private static final int LANES = 64;

    @Test
    @Timeout(60)
    void shouldCutTheWindowOnALossyPathAndKeepTheSumsExact() throws Exception
    {
        final Job job = new Job(4, 32, 0.05, 23, true);
        job.allReduce(20_000);
        assertThat(job.sum(WorkerCounter.RETRANSMISSIONS)).as("losses were recovered").isPositive();
        assertThat(job.sum(WorkerCounter.WINDOW_CUTS)).as("loss episodes cut the windows").isPositive();
    }

    @Test
    @Timeout(60)
    void shouldKeepThePoolAsTheWindowUnderLossByDefault() throws Exception
    {
        final Job job = new Job(4, 32, 0.05, 23, false);
        job.allReduce(20_000);
        assertThat(job.sum(WorkerCounter.RETRANSMISSIONS)).as("losses were recovered").isPositive();
        assertThat(job.sum(WorkerCounter.WINDOW_CUTS)).isZero();
    }

    @Test
    @Timeout(60)
    void shouldKeepTheWholeWindowWithoutLoss() throws Exception
    {
        final Job job = new Job(4, 32, 0, 0, true);
        job.allReduce(20_000);
        assertThat(job.sum(WorkerCounter.RETRANSMISSIONS)).isZero();
        assertThat(job.sum(WorkerCounter.WINDOW_CUTS)).isZero();
    }

    @Test
    @Timeout(60)
    void shouldAllReduceExactlyWithSixtyFourWorkers() throws Exception
    {
        new Job(64, 32, 0, 0, true).allReduce(8_000);
        final Job lossy = new Job(64, 32, 0.02, 5, true);
        lossy.allReduce(8_000);
        assertThat(lossy.sum(WorkerCounter.RETRANSMISSIONS)).as("losses were recovered").isPositive();
        assertThat(lossy.sum(WorkerCounter.WINDOW_CUTS)).as("windows cut to different sizes").isPositive();
    }

    /** A switch and {@code workers} workers; every endpoint drops, duplicates and reorders {@code faults} of packets. */
    private static final class Job
    {
        final int workers;
        final CounterRegistry registry = new CounterRegistry(1024);
        final List<Agent> agents = new ArrayList<>();
        final List<WorkerAgent> workerAgents = new ArrayList<>();

        Job(final int workers, final int slots, final double faults, final long seed, final boolean congestionControl)
        {
            this.workers = workers;
            final InProcessNetwork network = new InProcessNetwork(workers + 1, 1 << 20, 2048);
            final SoftwareSwitch sw = new SoftwareSwitch(endpoint(network, 0, faults, seed), registry, 64);
            sw.addJob(new SwitchJobConfig(JOB, workers, slots, LANES));
            agents.add(sw);
            for (int w = 0; w < workers; w++)
            {
                final WorkerAgent agent = new WorkerAgent(
                    new WorkerSettings(JOB, w, workers, 0, 0, 1_000_000L, 60_000_000_000L, 20_000_000L, 64)
                        .withCongestionControl(congestionControl),
                    endpoint(network, 1 + w, faults, seed), FixedPointConverter.best(), SystemNanoClock.INSTANCE, registry,
                    4);
                agent.onStart();
                workerAgents.add(agent);
                agents.add(agent);
            }
        }

        /** A float and an int32 all-reduce of {@code elements} per worker; both sums must be exact. */
        void allReduce(final int elements) throws Exception
        {
            final List<AllReduceOperation> operations = new ArrayList<>();
            for (int w = 0; w < workers; w++)
            {
                final MemorySegment floats = Arena.ofAuto().allocate((long)elements * Float.BYTES);
                final MemorySegment ints = Arena.ofAuto().allocate((long)elements * Integer.BYTES);
                for (int k = 0; k < elements; k++)
                {
                    floats.setAtIndex(ValueLayout.JAVA_FLOAT, k, floatValue(w, k));
                    ints.setAtIndex(ValueLayout.JAVA_INT, k, intValue(w, k));
                }
                final AllReduceOperation f = new AllReduceOperation(floats, floats, elements, true);
                final AllReduceOperation i = new AllReduceOperation(ints, ints, elements, false);
                assertThat(workerAgents.get(w).submit(f)).isTrue();
                assertThat(workerAgents.get(w).submit(i)).isTrue();
                operations.add(f);
                operations.add(i);
            }
            final CompositeAgent all = new CompositeAgent(agents);
            while (!operations.stream().allMatch(o -> o.completion().isDone()))
            {
                all.doWork();
            }
            for (int w = 0; w < workers; w++)
            {
                final AllReduceOperation f = operations.get(2 * w);
                final AllReduceOperation i = operations.get(2 * w + 1);
                assertThat(f.completion()).isCompleted();
                assertThat(i.completion()).isCompleted();
                for (int k = 0; k < elements; k++)
                {
                    float floatSum = 0;
                    int intSum = 0;
                    for (int v = 0; v < workers; v++)
                    {
                        floatSum += floatValue(v, k);
                        intSum += intValue(v, k);
                    }
                    assertThat(f.destination().getAtIndex(ValueLayout.JAVA_FLOAT, k))
                        .as("worker %d float %d", w, k).isEqualTo(floatSum);
                    assertThat(i.destination().getAtIndex(ValueLayout.JAVA_INT, k))
                        .as("worker %d int %d", w, k).isEqualTo(intSum);
                }
            }
        }

        long sum(final WorkerCounter counter)
        {
            return workerAgents.stream().mapToLong(a -> a.counter(counter)).sum();
        }
    }

    private static Transport endpoint(
        final InProcessNetwork network, final int peer, final double faults, final long seed)
    {
        final Transport endpoint = network.endpoint(peer);
        return faults == 0 ? endpoint : new FaultInjectingTransport(endpoint, FaultConfig.lossy(faults, seed + peer));
    }

    private static float floatValue(final int w, final int k)
    {
        return (float)(((w * 13 + k * 7) % 201) - 100) / 4; // multiples of 1/4: the fixed-point sum is exact
    }

    private static int intValue(final int w, final int k)
    {
        return (w * 1_000_003 + k * 7_919) % 2_000_000 - 1_000_000;
    }
}
