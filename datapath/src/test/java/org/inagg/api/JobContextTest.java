package org.inagg.api;

import java.time.Duration;

import org.inagg.transport.IdleStrategies;
import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JobContextTest
{
    private final InProcessNetwork network = new InProcessNetwork(2, 1 << 16, 1044);

    @Test
    void shouldNameWhatIsWrongInABadConfiguration()
    {
        assertThatThrownBy(() -> new JobContext().jobId(1).workers(4).workerId(4).transport(network.endpoint(1))
            .conclude()).hasMessageContaining("workerId must be in 0..3, got 4");
        assertThatThrownBy(() -> new JobContext().jobId(70000).workers(4).workerId(0).conclude())
            .hasMessageContaining("jobId must be in 0..65535");
        assertThatThrownBy(() -> new JobContext().jobId(1).workers(4).workerId(0).conclude())
            .hasMessageContaining("no transport");
        assertThatThrownBy(() -> new JobContext().jobId(1).workers(4).workerId(0).transport(network.endpoint(1))
            .retransmitTimeout(Duration.ofSeconds(2)).peerTimeout(Duration.ofSeconds(1)).conclude())
            .hasMessageContaining("must exceed retransmitTimeout");
        assertThatThrownBy(() -> new JobContext().jobId(1).workers(4).workerId(0).transport(network.endpoint(1))
            .idleStrategy("busy").conclude())
            .hasMessageContaining("unknown idle strategy 'busy'").hasMessageContaining(IdleStrategies.NAMES);
    }

    @Test
    void shouldFillDefaults()
    {
        final JobContext context = new JobContext().jobId(1).workers(4).workerId(2).transport(network.endpoint(1))
            .conclude();
        assertThat(context.peerTimeout()).isEqualTo(Duration.ofMillis(JobContext.PEER_TIMEOUT_DEFAULT_MS));
        assertThat(context.counters()).isNotNull();
    }

    @Test
    void shouldFailToOpenWithAClearErrorWhenNoSwitchAnswers()
    {
        final long start = System.nanoTime();
        assertThatThrownBy(() -> AllReduceJob.open(new JobContext().jobId(1).workers(2).workerId(0)
            .transport(network.endpoint(1)).switchPeer(0).peerTimeout(Duration.ofMillis(300))))
            .hasMessageContaining("did not answer the join within 300 ms")
            .hasMessageContaining("is the switch running");
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(5_000);
    }
}
