package org.inagg.p4.esa;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.testing.CollectiveScenario;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.p4.testing.CollectiveScenario.endpoint;

/**
 * Every collective and reduce op through the ESA switch and its parameter server (issue 25), bit for bit what the
 * one-level switch gives the same workers ({@link CollectiveScenario}). The pool has two aggregators for a window of
 * eight slots, so most blocks do not fit: they collide and go to the server raw, or are evicted by the job's newer
 * blocks and go there as PARTIALs naming their collective, op and Owner; under loss, retransmissions flush blocks and
 * are answered by the server (loss on the workers' hops). ESA (preemptive, the switch multicasts) and ATP (results through the switch).
 */
@Timeout(180)
class EsaCollectivesTest
{
    private static final int JOB = 7;
    private static final int WORKERS = 4;
    private static final int LANES = 64;
    private static final int SLOTS = 8;
    private static final int SWITCH = 0;
    private static final int SERVER = 1;

    @ParameterizedTest(name = "{0}, loss {1}")
    @CsvSource({"PREEMPTIVE, 0.0", "PREEMPTIVE, 0.03", "DEALLOCATE_ON_ACK, 0.0", "DEALLOCATE_ON_ACK, 0.03"})
    void shouldGiveTheOneLevelSwitchsBitsForEveryCollectiveAndOp(final AllocationMode mode, final double loss)
    {
        final int[][] oneLevel = CollectiveScenario.throughOneSwitch(JOB, WORKERS, SLOTS, LANES, loss);
        final int[][] esa;
        try (CollectiveScenario scenario = new CollectiveScenario(JOB, WORKERS))
        {
            final InProcessNetwork network = new InProcessNetwork(2 + WORKERS, 1 << 20, 2048);
            final CounterRegistry registry = new CounterRegistry(256);
            final int[] workerPeers = {2, 3, 4, 5};
            // Loss on the workers' hops only: the switch-server link must be lossless (docs/esa.md, "Liveness": a lost
            // COMPLETE copy and a lost result leave no one holding the block's sum).
            final EsaSwitch sw = new EsaSwitch(network.endpoint(SWITCH), registry,
                new EsaSwitchSettings(2, WORKERS, LANES, mode, PriorityPolicy.HEADER, 64));
            final ParameterServer server = new ParameterServer(network.endpoint(SERVER), registry, 64, 64);
            sw.addJob(new EsaJobConfig(JOB, WORKERS, LANES, SLOTS, 0, workerPeers, SERVER, 0));
            server.addJob(new ServerJobConfig(JOB, WORKERS, workerPeers, SWITCH,
                mode == AllocationMode.DEALLOCATE_ON_ACK));
            scenario.start(sw);
            scenario.start(server);
            for (int w = 0; w < WORKERS; w++)
            {
                scenario.openWorker(endpoint(network, workerPeers[w], loss), SWITCH);
            }
            esa = scenario.run();

            assertThat(sw.counter(EsaCounter.COMPLETIONS)).as("blocks the switch completed").isPositive();
            assertThat(sw.counter(EsaCounter.FALLBACK_COLLISION)).as("blocks that did not fit").isPositive();
            assertThat(sw.counter(EsaCounter.DROP_UNSUPPORTED)).isZero();
            assertThat(server.counter(ServerCounter.COMPLETED)).as("blocks the server finished").isPositive();
            assertThat(server.counter(ServerCounter.DROP_UNSUPPORTED)).isZero();
            assertThat(sw.counter(EsaCounter.STALE_EVICTIONS)).as("evicted blocks").isPositive();
            assertThat(server.counter(ServerCounter.PARTIALS_MERGED)).as("their PARTIALs").isPositive();
            if (loss > 0)
            {
                assertThat(server.counter(ServerCounter.RETRANSMIT_REPLIES)).isPositive();
            }
        }
        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(esa[w]).as("worker %d's outputs, as raw bits", w).isEqualTo(oneLevel[w]);
        }
    }
}
