package org.inagg.services.ps;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.inagg.services.LoopbackPorts.LOOPBACK_ANY;

import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.inagg.agent.CounterRegistry;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.LoopbackPorts;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.TransportDecorator;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The parameter server as a process: its context's checks, a launch that sums two workers exactly, a close that frees
 * all once, and a failed launch that leaves nothing open.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ParameterServerNodeTest
{
    private static final List<InetSocketAddress> TWO_WORKERS =
        List.of(new InetSocketAddress("127.0.0.1", 9001), new InetSocketAddress("127.0.0.1", 9002));

    @Test
    void shouldRefuseAJobWhoseWorkersAreNotAllAddressed()
    {
        final ParameterServerContext context = new ParameterServerContext().bind(LOOPBACK_ANY)
            .job(new SwitchJobConfig(7, 3, 16, 64)).workers(TWO_WORKERS);

        assertThatThrownBy(context::conclude).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("--workers-at lists 2 addresses for the 3 workers of job 7");
        assertThatThrownBy(() -> new ParameterServerContext().conclude())
            .hasMessage("a parameter server needs its job");
        assertThatThrownBy(() -> new ParameterServerContext().job(new SwitchJobConfig(1, 1))
            .workers(List.of(new InetSocketAddress("127.0.0.1", 9001))).idle("nap").conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nap");
    }

    @Test
    void shouldSumTwoWorkersExactlyAndFreeAllOnceWhenClosed() throws Exception
    {
        final int maxMessage = InaggHeader.messageLength(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU);
        final UdpTransport[] workers = {UdpTransport.open(LOOPBACK_ANY, List.of(), 1, maxMessage, 64),
            UdpTransport.open(LOOPBACK_ANY, List.of(), 1, maxMessage, 64)};
        final AtomicInteger countersClosed = new AtomicInteger();
        final AtomicInteger decorated = new AtomicInteger();
        final ParameterServerNode node = ParameterServerNode.launch(new ParameterServerContext().bind(LOOPBACK_ANY)
            .job(new SwitchJobConfig(7, 2, 16, 64))
            .workers(List.of(workers[0].localAddress(), workers[1].localAddress())).idle("sleep-ns:100000")
            .decorator(udp ->
            {
                decorated.incrementAndGet();
                return udp;
            })
            .counters(label -> new CounterRegistry(128), countersClosed::incrementAndGet));
        final InetSocketAddress bound = node.localAddress();
        try
        {
            assertThat(decorated).as("its transport through the decorator").hasValue(1);
            assertThat(node.awaitClose(1, TimeUnit.MILLISECONDS)).as("running").isFalse();
            assertThatThrownBy(() -> new DatagramSocket(bound).close()).as("the port is the server's")
                .isInstanceOf(java.net.BindException.class);
            final int[][] tensors = new int[2][3000];
            final int[] expected = new int[3000];
            for (int k = 0; k < expected.length; k++)
            {
                tensors[0][k] = 7 * k - 3_000;
                tensors[1][k] = Integer.MAX_VALUE - k; // wraps: int32 sums are two's complement
                expected[k] = tensors[0][k] + tensors[1][k];
            }
            final List<CompletableFuture<Void>> runs = new ArrayList<>();
            for (int w = 0; w < workers.length; w++)
            {
                assertThat(workers[w].addPeer(bound)).as("the server is the worker's peer 0").isZero();
                final JobContext job = new JobContext().jobId(7).workerId(w).workers(2).transport(workers[w])
                    .peerTimeout(Duration.ofSeconds(10)).retransmitTimeout(Duration.ofMillis(5));
                final int[] tensor = tensors[w];
                runs.add(CompletableFuture.runAsync(() ->
                {
                    try (AllReduceJob allReduce = AllReduceJob.open(job))
                    {
                        allReduce.allReduce(tensor);
                    }
                }));
            }
            for (final CompletableFuture<Void> run : runs)
            {
                run.get(30, TimeUnit.SECONDS);
            }
            assertThat(tensors[0]).as("the exact int32 sum").isEqualTo(expected);
            assertThat(tensors[1]).isEqualTo(expected);
            assertThat(node.counter(ServerCounter.RAW_MERGED)).isPositive();
            assertThat(node.describeCounters()).startsWith("ps: received ");
        }
        finally
        {
            node.close();
        }
        node.close();
        assertThat(node.awaitClose(1, TimeUnit.SECONDS)).as("closed").isTrue();
        assertThat(countersClosed).as("counters closed once, a second close does nothing").hasValue(1);
        LoopbackPorts.assertFree(bound, "closing the node frees its port");
    }

    @Test
    void shouldLeaveNothingOpenWhenLaunchFails() throws Exception
    {
        final AtomicInteger countersOpened = new AtomicInteger();
        final AtomicInteger countersClosed = new AtomicInteger();
        try (DatagramSocket taken = new DatagramSocket(LOOPBACK_ANY))
        {
            final ParameterServerContext portTaken = valid((InetSocketAddress)taken.getLocalSocketAddress())
                .counters(label -> opened(countersOpened, 128), countersClosed::incrementAndGet);
            assertThatThrownBy(() -> ParameterServerNode.launch(portTaken)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("cannot bind a UDP socket to " + taken.getLocalSocketAddress());
            assertThat(countersOpened).as("nothing opened after the port").hasValue(0);
        }

        final InetSocketAddress port = LoopbackPorts.free();
        final ParameterServerContext decoratorFails = valid(port)
            .counters(label -> opened(countersOpened, 128), countersClosed::incrementAndGet)
            .decorator(udp -> { throw new IllegalStateException("no capture here"); });
        assertThatThrownBy(() -> ParameterServerNode.launch(decoratorFails)).hasMessage("no capture here");
        assertThat(countersClosed).as("the counters opened are closed").hasValue(countersOpened.get()).hasValue(1);
        LoopbackPorts.assertFree(port, "a failed launch frees its port");

        // Failing after the decorator (counters with room for the transport's only): the decorator's transport (a
        // capture, which closes the socket it wraps) is what is closed, so a capture file would be flushed.
        final AtomicInteger captureClosed = new AtomicInteger();
        final ParameterServerContext noRoom = valid(port)
            .counters(label -> opened(countersOpened, TransportCounter.values().length),
                countersClosed::incrementAndGet)
            .decorator(udp -> new TransportDecorator(udp)
            {
                @Override
                public void close()
                {
                    captureClosed.incrementAndGet();
                    super.close();
                }
            });
        assertThatThrownBy(() -> ParameterServerNode.launch(noRoom)).isInstanceOf(IllegalStateException.class);
        assertThat(captureClosed).as("the decorated transport closed").hasValue(1);
        assertThat(countersClosed).hasValue(countersOpened.get()).hasValue(2);
        LoopbackPorts.assertFree(port, "a failed launch frees its port");
    }

    private static ParameterServerContext valid(final InetSocketAddress bind)
    {
        return new ParameterServerContext().bind(bind).job(new SwitchJobConfig(7, 2, 16, 64)).workers(TWO_WORKERS);
    }

    private static CounterRegistry opened(final AtomicInteger opened, final int capacity)
    {
        opened.incrementAndGet();
        return new CounterRegistry(capacity);
    }
}
