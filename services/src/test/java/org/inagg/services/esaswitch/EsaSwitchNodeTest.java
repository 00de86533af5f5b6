package org.inagg.services.esaswitch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.inagg.agent.CounterRegistry;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.esaswitch.EsaSwitchContext.JobSpec;
import org.inagg.services.ps.ParameterServerContext;
import org.inagg.services.ps.ParameterServerNode;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shared-pool switch as a process: its context's checks, a launch that serves a job, a close that frees all. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EsaSwitchNodeTest
{
    private static final InetSocketAddress LOOPBACK_ANY = new InetSocketAddress("127.0.0.1", 0);
    private static final InetSocketAddress SOMEWHERE = new InetSocketAddress("127.0.0.1", 9101);
    private static final JobSpec JOB = new JobSpec(4, 1, 8, 64, 1, 0);

    @Test
    void shouldNameWhatIsMissingOrDoesNotFit()
    {
        assertThatThrownBy(() -> new EsaSwitchContext().conclude()).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("an ESA switch needs at least one --job");
        assertThatThrownBy(() -> new EsaSwitchContext().aggregators(0).conclude())
            .hasMessage("--aggregators must be in 1..1048576, got 0");
        assertThatThrownBy(() -> new EsaSwitchContext().jobs(List.of(JOB)).conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("job 4 has no registered sources");
        assertThatThrownBy(() -> new EsaSwitchContext().jobs(List.of(JOB))
            .sources(Map.of(4, new InetSocketAddress[] {SOMEWHERE})).conclude())
            .hasMessage("job 4 has no parameter server: give --server 4=HOST:PORT (an `inagg ps` for it)");
        assertThatThrownBy(() -> new EsaSwitchContext().jobs(List.of(JOB))
            .sources(Map.of(4, new InetSocketAddress[] {SOMEWHERE})).servers(Map.of(4, SOMEWHERE)).idle("nap")
            .conclude()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nap");
    }

    @Test
    void shouldServeAJobAndFreeItsPortWhenClosed() throws Exception
    {
        final AtomicInteger countersClosed = new AtomicInteger();
        final UdpTransport worker = UdpTransport.open(LOOPBACK_ANY, List.of(), 1,
            InaggHeader.messageLength(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU), 64);
        final InetSocketAddress bound;
        try (ParameterServerNode server = ParameterServerNode.launch(new ParameterServerContext().bind(LOOPBACK_ANY)
                .job(new SwitchJobConfig(JOB.jobId(), JOB.workers(), JOB.window(), JOB.lanes()))
                .workers(List.of(worker.localAddress())).idle("sleep-ns:100000"));
            EsaSwitchNode node = EsaSwitchNode.launch(new EsaSwitchContext().bind(LOOPBACK_ANY).aggregators(4)
                .mode(AllocationMode.PREEMPTIVE).jobs(List.of(JOB))
                .sources(Map.of(4, new InetSocketAddress[] {worker.localAddress()}))
                .servers(Map.of(4, server.localAddress())).idle("sleep-ns:100000")
                .counters(where -> new CounterRegistry(128), countersClosed::incrementAndGet)))
        {
            bound = node.localAddress();
            assertThat(bound.getPort()).isPositive();
            assertThat(node.describeIo()).isNotBlank();
            assertThat(node.awaitClose(1, TimeUnit.MILLISECONDS)).as("running").isFalse();
            final int[] in = new int[1000];
            for (int k = 0; k < in.length; k++)
            {
                in[k] = 11 * k - 5_000;
            }
            final int[] out = new int[in.length];
            assertThat(worker.addPeer(bound)).as("the switch is the worker's peer 0").isZero();
            try (AllReduceJob job = AllReduceJob.open(new JobContext().jobId(4).workerId(0).workers(1)
                .transport(worker).peerTimeout(Duration.ofSeconds(10)).retransmitTimeout(Duration.ofMillis(5))))
            {
                job.allReduce(in, out);
            }
            assertThat(out).as("a one-worker sum is its input").isEqualTo(in);
            assertThat(node.counter(EsaCounter.JOINS)).isPositive();
            assertThat(node.describeCounters()).startsWith("esa-switch: received ");
        }
        assertThat(countersClosed).as("counters closed once").hasValue(1);
        try (DatagramSocket again = new DatagramSocket(bound))
        {
            assertThat(again.getLocalPort()).as("closing the node frees its port").isEqualTo(bound.getPort());
        }
        try (EsaSwitchNode again = EsaSwitchNode.launch(new EsaSwitchContext().bind(bound).jobs(List.of(JOB))
            .sources(Map.of(4, new InetSocketAddress[] {SOMEWHERE})).servers(Map.of(4, SOMEWHERE))))
        {
            assertThat(again.localAddress()).as("a second launch on the same port").isEqualTo(bound);
        }
    }
}
