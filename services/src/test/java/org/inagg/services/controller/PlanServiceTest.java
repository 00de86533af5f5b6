package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.TopologyJson;
import org.inagg.services.http.HttpFailure;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code POST /v1/plans}' time limit stops the work, not only the answer: a plan of a large fat tree (an LP of about
 * 11,000 variables that ojAlgo takes about a minute to solve here) is answered 503 at the limit, and its thread ends
 * soon after instead of solving on.
 */
class PlanServiceTest
{
    private static final long LIMIT_MS = 2000;

    /** A fat tree of 100 workers and 4 parameter servers, with many paths and draws: minutes of planning. */
    private static byte[] big()
    {
        return body(TopologyJson.toJson(Topologies.fatTree(8, 100, 4, FabricSpec.uniform100G())),
            ",\"draws\":4096,\"pathLimit\":64");
    }

    private static byte[] body(final String topologyJson, final String options)
    {
        return ("{\"topology\":" + topologyJson + options + "}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    @Timeout(120)
    void shouldAnswerABigPlanWith503AtTheLimitAndLeaveNoPlanningThreadRunning() throws Exception
    {
        final byte[] big = big();
        try (PlanService plans = new PlanService(LIMIT_MS))
        {
            final long started = System.nanoTime();
            assertThatThrownBy(() -> plans.plan(big)).isInstanceOf(HttpFailure.class)
                .hasMessageContaining("longer than the controller's limit of " + LIMIT_MS + " ms")
                .hasMessageContaining("--plan-timeout-ms")
                .satisfies(e -> assertThat(((HttpFailure)e).status()).isEqualTo(503));
            final long answeredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertThat(answeredMs).as("answered at the limit").isBetween(LIMIT_MS, LIMIT_MS + 1500);

            final long stopDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (plans.planning() && System.nanoTime() - stopDeadline < 0)
            {
                Thread.sleep(20);
            }
            final long stoppedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertThat(plans.planning()).as("the planner stopped (%d ms after the request)", stoppedMs).isFalse();
            for (final Thread thread : Thread.getAllStackTraces().keySet())
            {
                if (thread.getName().equals(PlanService.THREAD_NAME))
                {
                    thread.join(5000);
                    assertThat(thread.isAlive()).as("no planning thread keeps running").isFalse();
                }
            }

            final byte[] small = body(TopologyJson.toJson(Topologies.gridExample()), "");
            assertThat(plans.plan(small).path("schema").asText()).as("the next plan is taken")
                .startsWith("inagg-plan");
        }
    }

    @Test
    @Timeout(30)
    void shouldAnswer503ToASecondPlanWhileOneRuns() throws Exception
    {
        final byte[] big = big();
        try (PlanService plans = new PlanService(LIMIT_MS))
        {
            final Thread first = Thread.ofPlatform().start(() -> assertThatThrownBy(() -> plans.plan(big))
                .isInstanceOf(HttpFailure.class));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!plans.planning() && System.nanoTime() - deadline < 0)
            {
                Thread.onSpinWait();
            }
            assertThatThrownBy(() -> plans.plan(big)).isInstanceOf(HttpFailure.class)
                .hasMessageContaining("computing another plan");
            first.join();
        }
    }
}
