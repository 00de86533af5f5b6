package org.inagg.services.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.inagg.services.LoopbackPorts.LOOPBACK_ANY;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.LoopbackPorts;
import org.inagg.services.softswitch.SwitchContext;
import org.inagg.services.softswitch.SwitchNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A worker as a process: its context's checks, a launch that all-reduces through a switch, a close that frees all. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WorkerNodeTest
{
    private static final InetSocketAddress SOME_SWITCH = new InetSocketAddress("127.0.0.1", 9);
    private static final int JOB = 3;
    private static final int WORKERS = 2;

    @Test
    void shouldNameTheSettingThatIsMissingOrDoesNotFit()
    {
        assertThatThrownBy(() -> new WorkerContext().conclude()).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("--switch host:port (or --controller URL");
        assertThatThrownBy(() -> valid().elements(0).conclude())
            .hasMessage("-n/--elements must be in 1.." + (Integer.MAX_VALUE - 8) + ", got 0");
        assertThatThrownBy(() -> valid().iterations(-2).conclude())
            .hasMessage("-i/--iterations must be at least 1, got -2");
        assertThatThrownBy(() -> valid().maxLanes(20_000).conclude())
            .hasMessage("--max-lanes must be in 1.." + WorkerContext.MAX_LANES_LIMIT + ", got 20000");
        assertThatThrownBy(() -> valid().peerTimeout(Duration.ZERO).conclude())
            .hasMessage("--peer-timeout-ms must be at least 1, got 0");
        assertThatThrownBy(() -> valid().controllerWait(Duration.ofMillis(500)).conclude())
            .hasMessage("--controller-wait-s must be at least 1, got PT0.5S");
        assertThatThrownBy(() -> valid().retransmitTimeout(Duration.ofNanos(-3_000)).conclude())
            .hasMessage("--retransmit-us must be at least 1, got -3");
        final WorkerContext concluded = valid().conclude();
        assertThatThrownBy(() -> concluded.workerId(7).conclude()).as("a setter after a check is checked again")
            .hasMessage("--worker-id must be in 0..1, got 7");
        assertThatThrownBy(() -> valid().loss(0.5).conclude()).hasMessageStartingWith("--loss must be in [0, 1/3]")
            .hasMessageEndingWith("got 0.5");
        assertThatThrownBy(() -> valid().dtype("float16").conclude())
            .hasMessage("--dtype must be float32 or int32, not float16");
        assertThatThrownBy(() -> valid().collective("gather").conclude())
            .hasMessage("--collective must be all-reduce, reduce-scatter, all-gather or broadcast, not gather");
        assertThatThrownBy(() -> valid().op("prod").conclude()).hasMessage("--op must be sum, min or max, not prod");
        assertThatThrownBy(() -> valid().collective("reduce-scatter").elements(10).workers(3).conclude())
            .hasMessageContaining("10 is not a multiple of 3 workers");
        assertThatThrownBy(() -> valid().workerId(2).conclude()).hasMessage("--worker-id must be in 0..1, got 2");
        assertThatThrownBy(() -> valid().idle("nap").conclude()).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("nap");
        assertThatThrownBy(() -> valid().controller("http://127.0.0.1:9").conclude())
            .hasMessageStartingWith("which job? With a controller, pass --job-name NAME");
        assertThat(valid().conclude().ints()).as("float32 by default").isFalse();
    }

    @Test
    void shouldAllReduceExactlyThroughItsSwitchAndFreeItsPortWhenClosed() throws Exception
    {
        try (SwitchNode switchNode = SwitchNode.launch(new SwitchContext().bind(LOOPBACK_ANY).open(true)
            .jobs(List.of(new SwitchJobConfig(JOB, WORKERS, 16, 64))).idle("sleep-ns:100000")))
        {
            final InetSocketAddress[] ports = {LoopbackPorts.free(), LoopbackPorts.free()};
            final AtomicInteger countersClosed = new AtomicInteger();
            final AtomicInteger decorated = new AtomicInteger();
            final List<CompletableFuture<WorkerNode>> launches = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++)
            {
                final WorkerContext context = new WorkerContext().jobId(JOB).workerId(w).workers(WORKERS)
                    .bind(ports[w]).switchAddress(switchNode.localAddress()).dtype(WorkerContext.INT32).elements(1000)
                    .maxLanes(64).retransmitTimeout(Duration.ofMillis(5)).idle("sleep-ns:100000")
                    .decorator((transport, headers) ->
                    {
                        decorated.incrementAndGet();
                        return transport;
                    })
                    .counters(name -> new CounterRegistry(128), countersClosed::incrementAndGet);
                launches.add(CompletableFuture.supplyAsync(() -> launchUnchecked(context)));
            }
            final WorkerNode[] nodes = {launches.get(0).get(30, TimeUnit.SECONDS),
                launches.get(1).get(30, TimeUnit.SECONDS)};
            try
            {
                assertThat(decorated).as("each transport through the decorator").hasValue(WORKERS);
                assertThat(nodes[1].workerId()).isEqualTo(1);
                assertThat(nodes[1].jobId()).isEqualTo(JOB);
                assertThat(nodes[0].describeSwitch()).contains(Integer.toString(switchNode.localAddress().getPort()));
                assertThat(nodes[0].transportNotes()).hasSize(2);
                assertThat(nodes[0].awaitClose(1, TimeUnit.MILLISECONDS)).as("running").isFalse();

                final int[][] tensors = new int[WORKERS][1000];
                final int[] expected = new int[1000];
                for (int k = 0; k < expected.length; k++)
                {
                    tensors[0][k] = 7 * k - 3_000;
                    tensors[1][k] = Integer.MAX_VALUE - k; // wraps: int32 sums are two's complement
                    expected[k] = tensors[0][k] + tensors[1][k];
                }
                final List<CompletableFuture<Boolean>> runs = new ArrayList<>();
                final StringWriter report = new StringWriter();
                for (int w = 0; w < WORKERS; w++)
                {
                    final WorkerNode node = nodes[w];
                    final int[] tensor = tensors[w];
                    runs.add(CompletableFuture.supplyAsync(() ->
                    {
                        node.job().allReduce(tensor);
                        final SyntheticWorkload workload = SyntheticWorkload.of(node);
                        workload.run(node.job());
                        final PrintWriter out = new PrintWriter(report);
                        synchronized (report)
                        {
                            return workload.check(node.job(), out);
                        }
                    }));
                }
                for (final CompletableFuture<Boolean> run : runs)
                {
                    assertThat(run.get(30, TimeUnit.SECONDS)).as("the synthetic int32 sum is exact").isTrue();
                }
                assertThat(tensors[0]).as("the exact int32 sum").isEqualTo(expected);
                assertThat(tensors[1]).isEqualTo(expected);
                assertThat(report.toString()).contains("exact int32 sum        yes");
            }
            finally
            {
                nodes[0].close();
                nodes[1].close();
            }
            nodes[0].close();
            assertThat(nodes[0].awaitClose(1, TimeUnit.SECONDS)).as("closed").isTrue();
            assertThat(countersClosed).as("counters closed once per node, a second close does nothing")
                .hasValue(WORKERS);
            for (final InetSocketAddress port : ports)
            {
                LoopbackPorts.assertFree(port, "closing the node frees its UDP port");
            }
        }
    }

    @Test
    void shouldLeaveNothingOpenWhenLaunchFails() throws Exception
    {
        final AtomicInteger countersOpened = new AtomicInteger();
        final AtomicInteger countersClosed = new AtomicInteger();
        try (DatagramSocket taken = new DatagramSocket(LOOPBACK_ANY))
        {
            final WorkerContext portTaken = valid().bind((InetSocketAddress)taken.getLocalSocketAddress())
                .counters(name -> opened(countersOpened), countersClosed::incrementAndGet);
            assertThatThrownBy(() -> WorkerNode.launch(portTaken)).isInstanceOf(java.io.UncheckedIOException.class)
                .hasMessageContaining("cannot bind a UDP socket to " + taken.getLocalSocketAddress());
            assertThat(countersOpened).as("nothing opened after the port").hasValue(0);
        }

        // Opened, then failing: the decorator throws after the counters opened.
        final InetSocketAddress port = LoopbackPorts.free();
        final WorkerContext decoratorFails = valid().bind(port)
            .counters(name -> opened(countersOpened), countersClosed::incrementAndGet)
            .decorator((transport, headers) -> { throw new IllegalStateException("no capture here"); });
        assertThatThrownBy(() -> WorkerNode.launch(decoratorFails)).hasMessage("no capture here");
        assertThat(countersClosed).as("the counters opened are closed").hasValue(countersOpened.get()).hasValue(1);
        LoopbackPorts.assertFree(port, "a failed launch frees its port");

        // A switch that refuses the job: the join fails, its agent closed the transport, which closing again keeps.
        try (SwitchNode switchNode = SwitchNode.launch(new SwitchContext().bind(LOOPBACK_ANY).open(true)
            .jobs(List.of(new SwitchJobConfig(JOB, WORKERS, 16, 64)))))
        {
            final InetSocketAddress joinPort = LoopbackPorts.free();
            final WorkerContext unknownJob = valid().jobId(JOB + 1).bind(joinPort).loss(0.01)
                .switchAddress(switchNode.localAddress()).peerTimeout(Duration.ofMillis(200))
                .counters(name -> opened(countersOpened), countersClosed::incrementAndGet);
            assertThatThrownBy(() -> WorkerNode.launch(unknownJob)).as("the join's failure, not a second close's")
                .hasMessageContaining("the switch has no such job");
            assertThat(countersClosed).hasValue(countersOpened.get()).hasValue(2);
            LoopbackPorts.assertFree(joinPort, "a failed launch frees its port");
        }
    }

    private static WorkerContext valid()
    {
        return new WorkerContext().workers(WORKERS).switchAddress(SOME_SWITCH).elements(1024);
    }

    private static CounterRegistry opened(final AtomicInteger opened)
    {
        opened.incrementAndGet();
        return new CounterRegistry(128);
    }

    private static WorkerNode launchUnchecked(final WorkerContext context)
    {
        try
        {
            return WorkerNode.launch(context);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
