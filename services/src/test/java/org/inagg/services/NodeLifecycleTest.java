package org.inagg.services;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A node stops once, in order, and a close step that throws neither skips the later ones nor leaves waiters hanging. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NodeLifecycleTest
{
    @Test
    void shouldRunEveryStepOnceInOrderAndReleaseWaiters() throws InterruptedException
    {
        final List<String> steps = new ArrayList<>();
        final AgentRunner runner = started();
        final NodeLifecycle lifecycle = new NodeLifecycle(runner, () -> steps.add("control"),
            () -> steps.add("counters"));
        assertThat(lifecycle.awaitClose(1, TimeUnit.MILLISECONDS)).isFalse();
        lifecycle.close();
        lifecycle.close();
        assertThat(runner.isClosed()).isTrue();
        assertThat(steps).containsExactly("control", "counters");
        assertThat(lifecycle.awaitClose(1, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldRunTheLaterStepsAndCountAsClosedWhenAStepThrows() throws InterruptedException
    {
        final List<String> steps = new ArrayList<>();
        final NodeLifecycle lifecycle = new NodeLifecycle(started(),
            () ->
            {
                throw new IllegalStateException("control port: close failed");
            },
            () -> steps.add("counters"),
            () ->
            {
                throw new IllegalStateException("second failure");
            });
        assertThatThrownBy(lifecycle::close).hasMessage("control port: close failed")
            .satisfies(ex -> assertThat(ex.getSuppressed()).hasSize(1));
        assertThat(steps).containsExactly("counters");
        assertThat(lifecycle.awaitClose(1, TimeUnit.SECONDS)).as("waiters are released").isTrue();
        lifecycle.close(); // closed: nothing runs again, nothing thrown
        assertThat(steps).containsExactly("counters");
    }

    private static AgentRunner started()
    {
        final AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null,
            new Agent()
            {
                @Override
                public int doWork()
                {
                    return 0;
                }

                @Override
                public String roleName()
                {
                    return "idle";
                }
            });
        AgentRunner.startOnThread(runner);
        return runner;
    }
}
