package org.inagg.perf.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.inagg.transport.FaultConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A thread waiting in {@link LocalCluster#allReduce} for a run that cannot finish (a worker killed, a peer timeout far
 * away) gives up when interrupted, as JUnit's {@code @Timeout} interrupts a test: a stuck run never outlives its limit.
 */
class LocalClusterInterruptTest
{
    @Test
    @Timeout(60)
    void shouldStopWaitingForAStuckAllReduceWhenInterrupted() throws Exception
    {
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(2).withSlots(8)
            .withFaults(FaultConfig.NONE).withTimeouts(Duration.ofMillis(2), Duration.ofSeconds(120))))
        {
            cluster.kill(1);
            final Thread caller = Thread.currentThread();
            final CompletableFuture<Void> interrupter = CompletableFuture.runAsync(() ->
            {
                try
                {
                    Thread.sleep(300);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
                caller.interrupt();
            });
            final long start = System.nanoTime();
            Throwable thrown = null;
            try
            {
                cluster.allReduce(new float[2][10_000]);
            }
            catch (final IllegalStateException ex)
            {
                thrown = ex;
            }
            final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            final boolean kept = Thread.interrupted();
            interrupter.get(10, TimeUnit.SECONDS);

            assertThat(thrown).as("the wait ended by the interrupt, not by the 120 s peer timeout")
                .hasMessageContaining("interrupted");
            assertThat(kept).as("the interrupt is kept for the caller").isTrue();
            assertThat(waitedMs).isLessThan(60_000);
        }
    }
}
