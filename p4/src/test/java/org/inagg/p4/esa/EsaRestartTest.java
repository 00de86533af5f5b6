package org.inagg.p4.esa;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.testing.RestartableWorkers;
import org.inagg.p4.testing.RestartableWorkers.Worker;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An ESA (or ATP) job restarted in place (issue 23): every worker is killed mid-run and started again with the same job
 * id from its registered address. The ESA switch starts a new session when a worker rejoins as a new process (the
 * job's aggregators are released), the parameter server follows from the packets the switch forwards, and the new run
 * completes exactly. A pool smaller than the window makes the switch fall back to the server throughout.
 */
class EsaRestartTest
{
    private static final int JOB = 4;
    private static final int SWITCH = 0;
    private static final int SERVER = 1;
    private static final int FIRST_WORKER_PEER = 2;
    private static final int WORKERS = 3;
    private static final int ELEMENTS = 40_000;
    private static final long PEER_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    @ParameterizedTest
    @EnumSource(AllocationMode.class)
    @Timeout(120)
    void shouldCompleteExactlyWhenEveryWorkerIsKilledMidRunAndRestartedWithTheSameJobId(final AllocationMode mode)
    {
        final int[] peers = {FIRST_WORKER_PEER, FIRST_WORKER_PEER + 1, FIRST_WORKER_PEER + 2};
        final InProcessNetwork network = new InProcessNetwork(FIRST_WORKER_PEER + WORKERS, 1 << 21, 2048);
        final CounterRegistry registry = new CounterRegistry(512);
        final EsaSwitch sw = new EsaSwitch(network.endpoint(SWITCH), registry,
            new EsaSwitchSettings(8, WORKERS, 64, mode, PriorityPolicy.HEADER, 64));
        final ParameterServer server = new ParameterServer(network.endpoint(SERVER), registry, 64, 1 << 10);
        sw.addJob(new EsaJobConfig(JOB, WORKERS, 64, 16, 0, peers, SERVER, 0));
        server.addJob(new ServerJobConfig(JOB, WORKERS, peers, SWITCH, mode == AllocationMode.DEALLOCATE_ON_ACK));
        final List<Agent> agents = new ArrayList<>(List.of(sw, server));
        final List<Worker> first = start(network, registry, 1);
        first.forEach(w -> agents.add(w.agent()));
        assertThat(RestartableWorkers.runUntil(agents, () -> sw.counter(EsaCounter.COMPLETIONS) > 200, 30_000))
            .isTrue();
        RestartableWorkers.killAllAndRestart(agents, first, seed -> start(network, registry, seed), ELEMENTS);
        assertThat(sw.session(JOB)).as("the switch's session").isEqualTo(1);
        assertThat(sw.counter(EsaCounter.JOINS)).isGreaterThanOrEqualTo(2 * WORKERS);
    }

    private static List<Worker> start(final InProcessNetwork network, final CounterRegistry registry, final int seed)
    {
        final List<Worker> run = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            run.add(RestartableWorkers.start(network.endpoint(FIRST_WORKER_PEER + w), registry, JOB, w, WORKERS,
                SWITCH, PEER_TIMEOUT_NS, ELEMENTS, seed));
        }
        return run;
    }
}
