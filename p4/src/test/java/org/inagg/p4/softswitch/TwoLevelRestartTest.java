package org.inagg.p4.softswitch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.testing.RestartableWorkers;
import org.inagg.p4.testing.RestartableWorkers.Worker;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A two-level job restarted in place (issue 23): the parameter server and one first-level switch, workers 0 and 1
 * behind the switch, worker 2 sending to the server directly. Every worker is killed mid-run and started again with the
 * same job id from its registered address: the switch starts a new session when its workers rejoin, the server when
 * worker 2 rejoins it or the switch forwards a packet of the new session, and the new run completes exactly.
 */
class TwoLevelRestartTest
{
    private static final int JOB = 9;
    private static final int SWITCH = 0;
    private static final int SERVER = 1;
    private static final int FIRST_WORKER_PEER = 2;
    private static final int WORKERS = 3;
    private static final int ELEMENTS = 40_000;
    private static final long PEER_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private static int sendsTo(final int worker)
    {
        return worker < 2 ? SWITCH : SERVER;
    }

    @Test
    @Timeout(120)
    void shouldCompleteExactlyWhenEveryWorkerOfATwoLevelJobIsKilledMidRunAndRestartedWithTheSameJobId()
    {
        final int[] peers = {FIRST_WORKER_PEER, FIRST_WORKER_PEER + 1, FIRST_WORKER_PEER + 2};
        final InProcessNetwork network = new InProcessNetwork(FIRST_WORKER_PEER + WORKERS, 1 << 21, 2048);
        final CounterRegistry registry = new CounterRegistry(512);
        final SoftwareSwitch sw = new SoftwareSwitch(network.endpoint(SWITCH), registry, 64);
        final ParameterServer server = new ParameterServer(network.endpoint(SERVER), registry, 64, 1 << 10);
        sw.addJob(new SwitchJobConfig(JOB, WORKERS, 16, 64, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, peers), new UpstreamAggregation(SERVER, new int[] {0, 1}));
        server.addJob(new ServerJobConfig(JOB, WORKERS, peers, SWITCH, false, 16, 64));
        final List<Agent> agents = new ArrayList<>(List.of(sw, server));
        final List<Worker> first = start(network, registry, 1);
        first.forEach(w -> agents.add(w.agent()));
        assertThat(RestartableWorkers.runUntil(agents,
            () -> server.counter(ServerCounter.PARTIALS_MERGED) > 200, 30_000)).isTrue();
        RestartableWorkers.killAllAndRestart(agents, first, seed -> start(network, registry, seed), ELEMENTS);
        assertThat(sw.session(JOB)).as("the switch's session").isEqualTo(1);
        assertThat(server.session(JOB)).as("the server's session").isEqualTo(1);
        assertThat(server.openBlocks(JOB)).isZero();
    }

    private static List<Worker> start(final InProcessNetwork network, final CounterRegistry registry, final int seed)
    {
        final List<Worker> run = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            run.add(RestartableWorkers.start(network.endpoint(FIRST_WORKER_PEER + w), registry, JOB, w, WORKERS,
                sendsTo(w), PEER_TIMEOUT_NS, ELEMENTS, seed));
        }
        return run;
    }
}
