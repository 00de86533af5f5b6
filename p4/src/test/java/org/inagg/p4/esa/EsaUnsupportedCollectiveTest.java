package org.inagg.p4.esa;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.JobRejectedException;
import org.inagg.agent.CounterRegistry;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.api.ReduceOp;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A collective the ESA switch does not carry fails the workers at once, with the reason, instead of stalling until
 * their peer timeout (issue 25): the switch answers the admitted AGGREGATE with a REJECT (UNSUPPORTED_COLLECTIVE)
 * naming its collective and op. Two workers, each job on its own thread, through the public API; the peer timeout is
 * a minute, so only the REJECT can end the operation within the test's limit.
 */
@Timeout(60)
class EsaUnsupportedCollectiveTest
{
    private static final int JOB = 6;
    private static final int WORKERS = 2;
    private static final int SWITCH = 0;
    private static final int SERVER = 1;
    private static final int LANES = 64;

    private final List<AgentRunner> runners = new ArrayList<>();
    private final List<AllReduceJob> jobs = new ArrayList<>();
    private EsaSwitch sw;

    @BeforeEach
    void setUp()
    {
        final InProcessNetwork network = new InProcessNetwork(2 + WORKERS, 1 << 20, 2048);
        final CounterRegistry registry = new CounterRegistry(128);
        sw = new EsaSwitch(network.endpoint(SWITCH), registry,
            new EsaSwitchSettings(8, 4, LANES, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER, 64));
        final ParameterServer server = new ParameterServer(network.endpoint(SERVER), registry, 64, 64);
        final int[] peers = {2, 3};
        sw.addJob(new EsaJobConfig(JOB, WORKERS, LANES, 8, 0, peers, SERVER, 0));
        server.addJob(new ServerJobConfig(JOB, WORKERS, peers, SWITCH, false));
        start(sw);
        start(server);
        for (int w = 0; w < WORKERS; w++)
        {
            jobs.add(AllReduceJob.open(new JobContext().jobId(JOB).workers(WORKERS).workerId(w)
                .transport(network.endpoint(peers[w])).switchPeer(SWITCH).peerTimeout(Duration.ofMinutes(1))));
        }
    }

    @AfterEach
    void tearDown()
    {
        jobs.forEach(AllReduceJob::close);
        runners.forEach(AgentRunner::close);
    }

    @Test
    void shouldFailAReduceScatterAtOnceNamingItAndTheNode()
    {
        final int[][] data = {{1, 2, 3, 4}, {10, 20, 30, 40}};
        all(w -> jobs.get(w).allReduceAsync(data[w])).join();
        assertThat(data[0]).containsExactly(11, 22, 33, 44);

        final long start = System.nanoTime();
        final CompletableFuture<Void> scatter = all(w -> jobs.get(w).reduceScatterAsync(new float[2 * LANES],
            new float[LANES], ReduceOp.SUM));
        assertThatThrownBy(() -> scatter.get(20, TimeUnit.SECONDS))
            .hasCauseInstanceOf(JobRejectedException.class)
            .hasMessageContaining("collective REDUCE_SCATTER (op SUM) is not supported by the node at");
        assertThat(System.nanoTime() - start).as("long before the minute's peer timeout")
            .isLessThan(TimeUnit.SECONDS.toNanos(20));
        assertThat(sw.counter(EsaCounter.DROP_UNSUPPORTED)).isPositive();
        assertThat(sw.counter(EsaCounter.CONTRIBUTIONS)).as("the ALL_REDUCE SUM only").isEqualTo(2);
    }

    @Test
    void shouldFailAMaximumAtOnce()
    {
        final CompletableFuture<Void> max = all(w -> jobs.get(w).allReduceAsync(new int[] {w, -w}, ReduceOp.MAX));
        assertThatThrownBy(() -> max.get(20, TimeUnit.SECONDS))
            .hasCauseInstanceOf(JobRejectedException.class)
            .hasMessageContaining("collective ALL_REDUCE (op MAX) is not supported by the node at");
    }

    private void start(final Agent agent)
    {
        final AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(0), Throwable::printStackTrace, null,
            agent);
        runners.add(runner);
        AgentRunner.startOnThread(runner);
    }

    private static CompletableFuture<Void> all(final IntFunction<CompletableFuture<Void>> operation)
    {
        final List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            futures.add(operation.apply(w));
        }
        return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new));
    }
}
