package org.inagg.p4.softswitch;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.testing.CollectiveScenario;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.p4.testing.CollectiveScenario.endpoint;

/**
 * Every collective and reduce op through two-level aggregation (issue 25), bit for bit what the one-level switch gives
 * the same workers: switch S1 sums workers 0 and 1, switch S2 worker 2, worker 3 sends straight to the parameter
 * server, which finishes each round from the two PARTIALs and worker 3's raw packets. The same inputs run through one
 * {@link SoftwareSwitch} and through the two levels ({@link CollectiveScenario}), with and without loss (whose
 * retransmissions of complete rounds the server answers, header-only to a REDUCE_SCATTER round's other workers), and
 * every worker's outputs are compared as raw bits, besides being checked against what each collective must give; and
 * again with the results coming down the tree ({@link UpstreamAggregation#resultsDown()}: the server sends each round's
 * result once to S1 and S2, which multicast it), where a result lost on its way down is made good by the workers'
 * retransmissions, answered by the server directly.
 */
@Timeout(180)
class TwoLevelCollectivesTest
{
    private static final int JOB = 5;
    private static final int WORKERS = 4;
    private static final int LANES = 64;
    private static final int SLOTS = 8;
    /** Two-level peers: S1, S2, the server, then the workers. */
    private static final int S1 = 0;
    private static final int S2 = 1;
    private static final int PS = 2;
    private static final int FIRST_WORKER_PEER = 3;

    @ParameterizedTest(name = "loss {0}, results down the tree {1}")
    @CsvSource({"0.0, false", "0.03, false", "0.0, true", "0.03, true", "0.1, true"})
    void shouldGiveTheOneLevelSwitchsBitsForEveryCollectiveAndOp(final double loss, final boolean resultsDown)
    {
        final int[][] oneLevel = CollectiveScenario.throughOneSwitch(JOB, WORKERS, SLOTS, LANES, loss);
        final int[][] twoLevel;
        try (CollectiveScenario scenario = new CollectiveScenario(JOB, WORKERS))
        {
            final InProcessNetwork network = new InProcessNetwork(FIRST_WORKER_PEER + WORKERS, 1 << 20, 2048);
            final CounterRegistry registry = new CounterRegistry(256);
            final int[] workerPeers = new int[WORKERS];
            for (int w = 0; w < WORKERS; w++)
            {
                workerPeers[w] = FIRST_WORKER_PEER + w;
            }
            final SwitchJobConfig config = new SwitchJobConfig(JOB, WORKERS, SLOTS, LANES,
                SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP, workerPeers);
            final SoftwareSwitch s1 = new SoftwareSwitch(endpoint(network, S1, loss), registry, 64);
            final SoftwareSwitch s2 = new SoftwareSwitch(endpoint(network, S2, loss), registry, 64);
            s1.addJob(config, new UpstreamAggregation(PS, new int[] {0, 1}, resultsDown));
            s2.addJob(config, new UpstreamAggregation(PS, new int[] {2}, resultsDown));
            final ParameterServer server = new ParameterServer(endpoint(network, PS, loss), registry, 64, 64);
            server.addJob(new ServerJobConfig(JOB, WORKERS, workerPeers, S1, false, SLOTS, LANES));
            scenario.start(s1);
            scenario.start(s2);
            scenario.start(server);
            final int[] sendsTo = {S1, S1, S2, PS};
            for (int w = 0; w < WORKERS; w++)
            {
                scenario.openWorker(endpoint(network, FIRST_WORKER_PEER + w, loss), sendsTo[w]);
            }
            twoLevel = scenario.run();

            assertThat(s1.counter(SwitchCounter.UPSTREAM_PARTIALS)).isPositive();
            assertThat(s2.counter(SwitchCounter.UPSTREAM_PARTIALS)).isPositive();
            if (resultsDown)
            {
                assertThat(s1.counter(SwitchCounter.RESULTS_RELAYED)).as("results come down through S1").isPositive();
                assertThat(s2.counter(SwitchCounter.RESULTS_RELAYED)).isPositive();
                assertThat(server.counter(ServerCounter.RESULTS_TO_SUBTREES)).isPositive();
            }
            else
            {
                assertThat(s1.counter(SwitchCounter.RESULTS_SENT)).as("results come from the server").isZero();
                assertThat(server.counter(ServerCounter.RESULTS_TO_SUBTREES)).isZero();
            }
            assertThat(s1.counter(SwitchCounter.DROP_UNSUPPORTED)).isZero();
            assertThat(server.counter(ServerCounter.PARTIALS_MERGED)).isPositive();
            assertThat(server.counter(ServerCounter.RAW_MERGED)).as("worker 3 sends raw").isPositive();
            assertThat(server.counter(ServerCounter.DROP_UNSUPPORTED)).isZero();
            if (loss > 0)
            {
                assertThat(server.counter(ServerCounter.RETRANSMIT_REPLIES))
                    .as("retransmissions of complete rounds answered by the server").isPositive();
            }
        }
        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(twoLevel[w]).as("worker %d's outputs, as raw bits", w).isEqualTo(oneLevel[w]);
        }
    }
}
