package org.inagg.services.ps;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The parameter server as a process: its context's checks, and a launch that holds its port until closed. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ParameterServerNodeTest
{
    private static final InetSocketAddress LOOPBACK_ANY = new InetSocketAddress("127.0.0.1", 0);

    @Test
    void shouldRefuseAJobWhoseWorkersAreNotAllAddressed()
    {
        final ParameterServerContext context = new ParameterServerContext().bind(LOOPBACK_ANY)
            .job(new SwitchJobConfig(7, 3, 16, 64))
            .workers(List.of(new InetSocketAddress("127.0.0.1", 9001), new InetSocketAddress("127.0.0.1", 9002)));

        assertThatThrownBy(context::conclude).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("--workers-at lists 2 addresses for the 3 workers of job 7");
        assertThatThrownBy(() -> new ParameterServerContext().conclude())
            .hasMessage("a parameter server needs its job");
        assertThatThrownBy(() -> new ParameterServerContext().job(new SwitchJobConfig(1, 1))
            .workers(List.of(new InetSocketAddress("127.0.0.1", 9001))).idle("nap").conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nap");
    }

    @Test
    void shouldHoldItsPortUntilClosed() throws Exception
    {
        final ParameterServerContext context = new ParameterServerContext().bind(LOOPBACK_ANY)
            .job(new SwitchJobConfig(7, 2, 16, 64))
            .workers(List.of(new InetSocketAddress("127.0.0.1", 9001), new InetSocketAddress("127.0.0.1", 9002)))
            .idle("sleep-ns:100000");
        final InetSocketAddress bound;
        try (ParameterServerNode node = ParameterServerNode.launch(context))
        {
            bound = node.localAddress();
            assertThat(bound.getPort()).isPositive();
            assertThat(node.counter(ServerCounter.RECEIVED)).isZero();
            assertThat(node.describeCounters()).startsWith("ps: received 0,");
            assertThatThrownBy(() -> new DatagramSocket(bound).close()).as("the port is the server's")
                .isInstanceOf(java.net.BindException.class);
        }
        try (DatagramSocket again = new DatagramSocket(bound))
        {
            assertThat(again.getLocalPort()).as("closing the node frees its port").isEqualTo(bound.getPort());
        }
    }
}
