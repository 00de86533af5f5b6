package org.inagg.services.softswitch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.LoopbackPorts;
import org.inagg.services.http.JsonHttp;
import org.inagg.transport.TransportDecorator;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The software switch as a process: its context's checks, a launch that serves a job, and a close that frees all. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SwitchNodeTest
{
    private static final InetSocketAddress LOOPBACK_ANY = new InetSocketAddress("127.0.0.1", 0);
    private static final SwitchJobConfig JOB = new SwitchJobConfig(3, 1, 16, 64);

    @Test
    void shouldNameWhatIsMissingOrDoesNotFit()
    {
        assertThatThrownBy(() -> new SwitchContext().conclude()).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--job ID:WORKERS").hasMessageContaining("--control");
        assertThatThrownBy(() -> new SwitchContext().jobs(List.of(JOB)).conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("job 3 has no registered sources");
        assertThatThrownBy(() -> new SwitchContext().jobs(List.of(JOB)).open(true).localWorkers(new int[] {0})
            .conclude()).hasMessage("--upstream and --local-workers go together");
        assertThatThrownBy(() -> new SwitchContext().jobs(List.of(JOB)).open(true).localWorkers(new int[] {0})
            .upstream(new InetSocketAddress("127.0.0.1", 9100))
            .transportOpener((message, peers, learned) -> { throw new AssertionError("not opened"); }).conclude())
            .hasMessageStartingWith("--upstream runs over UDP");
        assertThatThrownBy(() -> new SwitchContext().jobs(List.of(JOB)).open(true).maxPeers(0).conclude())
            .hasMessage("--max-peers must be at least 1, got 0");
        assertThatThrownBy(() -> new SwitchContext().jobs(List.of(JOB)).open(true).idle("nap").conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nap");
    }

    @Test
    void shouldServeAJobFromItsRegisteredSourceAndFreeItsPortsWhenClosed() throws Exception
    {
        final AtomicInteger countersClosed = new AtomicInteger();
        final UdpTransport worker = UdpTransport.open(LOOPBACK_ANY, List.of(), 1,
            InaggHeader.messageLength(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU), 64);
        final SwitchContext context = new SwitchContext().bind(LOOPBACK_ANY).jobs(List.of(JOB))
            .sources(Map.of(3, new InetSocketAddress[] {worker.localAddress()}))
            .control(LOOPBACK_ANY).idle("sleep-ns:100000").counters(
                where -> new org.inagg.agent.CounterRegistry(128), countersClosed::incrementAndGet);
        final InetSocketAddress bound;
        final InetSocketAddress control;
        try (SwitchNode node = SwitchNode.launch(context))
        {
            bound = node.localAddress();
            control = node.controlAddress();
            assertThat(bound.getPort()).isPositive();
            assertThat(node.where()).isEqualTo("udp://127.0.0.1:" + bound.getPort());
            assertThat(node.jobs()).singleElement().satisfies(job -> assertThat(job.registeredSources()).isTrue());
            assertThat(node.transportNotes()).isNotEmpty();
            assertThat(node.awaitClose(1, TimeUnit.MILLISECONDS)).as("running").isFalse();
            final int[] in = new int[1000];
            for (int k = 0; k < in.length; k++)
            {
                in[k] = 7 * k - 3_000;
            }
            final int[] out = new int[in.length];
            assertThat(worker.addPeer(bound)).as("the switch is the worker's peer 0").isZero();
            try (AllReduceJob job = AllReduceJob.open(new JobContext().jobId(3).workerId(0).workers(1)
                .transport(worker).peerTimeout(Duration.ofSeconds(10)).retransmitTimeout(Duration.ofMillis(5))))
            {
                job.allReduce(in, out);
            }
            assertThat(out).as("a one-worker sum is its input").isEqualTo(in);
            assertThat(node.counter(SwitchCounter.CONTRIBUTIONS)).isPositive();
            assertThat(node.describeCounters()).startsWith("switch: received ");
        }
        assertThat(countersClosed).as("counters closed once").hasValue(1);
        try (DatagramSocket again = new DatagramSocket(bound); ServerSocket controlAgain = new ServerSocket())
        {
            controlAgain.bind(control);
            assertThat(again.getLocalPort()).as("closing the node frees its UDP port").isEqualTo(bound.getPort());
        }
        try (SwitchNode again = SwitchNode.launch(new SwitchContext().bind(bound).jobs(List.of(JOB)).open(true)))
        {
            assertThat(again.localAddress()).as("a second launch on the same port").isEqualTo(bound);
            again.close();
            assertThat(again.awaitClose(1, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void shouldAggregateEachJobOnTheShardOfItsIdAndFreeEveryShardsSocketWhenClosed() throws Exception
    {
        final SwitchJobConfig even = new SwitchJobConfig(2, 1, 16, 64);
        final SwitchJobConfig odd = new SwitchJobConfig(3, 1, 16, 64);
        final int message = InaggHeader.messageLength(64);
        final UdpTransport evenWorker = UdpTransport.open(LOOPBACK_ANY, List.of(), 1, message, 64);
        final UdpTransport oddWorker = UdpTransport.open(LOOPBACK_ANY, List.of(), 1, message, 64);
        final InetSocketAddress bound;
        // Each shard's transport is decorated once, knowing its shard (a loss injector seeds from it).
        final List<Integer> decorated = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (SwitchNode node = SwitchNode.launch(new SwitchContext().bind(LOOPBACK_ANY).jobs(List.of(even, odd))
            .sources(Map.of(2, new InetSocketAddress[] {evenWorker.localAddress()},
                3, new InetSocketAddress[] {oddWorker.localAddress()})).shards(4).idle("sleep-ns:100000")
            .decorator((shard, transport, headers) ->
            {
                decorated.add(shard);
                return transport;
            })))
        {
            bound = node.localAddress();
            assertThat(decorated).containsExactly(0, 1, 2, 3);
            assertThat(node.transportNotes()).anySatisfy(note -> assertThat(note)
                .startsWith("shards: 4 threads").contains("job 2 on shard 2, job 3 on shard 3"));
            // Only the job's own shard sees its messages: another shard would drop them as an unknown job's (and the
            // worker would never finish).
            allReduceThroughItsShard(node, evenWorker, 2, 2);
            allReduceThroughItsShard(node, oddWorker, 3, 3);
            // Four shards' counters fit the default registry, each counted on its own: the idle shards saw nothing.
            for (final int idle : new int[] {0, 1})
            {
                assertThat(node.counter(SwitchCounter.RECEIVED, idle)).as("shard %d", idle).isZero();
                assertThat(node.counter(SwitchCounter.CONTRIBUTIONS, idle)).as("shard %d", idle).isZero();
            }
            assertThatThrownBy(() -> SwitchNode.launch(new SwitchContext().bind(bound).jobs(List.of(even)).open(true)
                .shards(2))).as("a second group cannot join the first's port").hasMessageContaining("cannot bind");
        }
        LoopbackPorts.assertFree(bound, "closing every shard frees the port");
    }

    @Test
    void shouldInstallTheControllersJobsEachOnItsShardAndServeThem() throws Exception
    {
        final int message = InaggHeader.messageLength(64);
        // Job 3 on shard 1, job 4 on shard 0: installed in that order, listed by id.
        final UdpTransport worker3 = UdpTransport.open(LOOPBACK_ANY, List.of(), 1, message, 64);
        final UdpTransport worker4 = UdpTransport.open(LOOPBACK_ANY, List.of(), 1, message, 64);
        try (SwitchNode node = SwitchNode.launch(new SwitchContext().bind(LOOPBACK_ANY).control(LOOPBACK_ANY)
            .shards(2).idle("sleep-ns:100000"));
            HttpClient client = HttpClient.newHttpClient())
        {
            final String base = "http://127.0.0.1:" + node.controlAddress().getPort() + "/v1/jobs";
            for (final UdpTransport worker : List.of(worker3, worker4))
            {
                final JsonHttp.Answer put = JsonHttp.call(client, "PUT",
                    URI.create(base + "/" + (worker == worker3 ? 3 : 4)), JsonHttp.MAPPER.readTree(
                        "{\"workers\":1,\"slots\":16,\"lanes\":64,\"slotBase\":-1,\"session\":1,\"sources\":[\""
                        + JsonHttp.format(worker.localAddress()) + "\"]}"),
                    Duration.ofSeconds(5));
                assertThat(put.status()).as(put.describe()).isEqualTo(200);
            }
            final JsonHttp.Answer list = JsonHttp.call(client, "GET", URI.create(base), null, Duration.ofSeconds(5));
            assertThat(list.body().path("jobs").findValuesAsText("jobId")).as("both shards' jobs, by id")
                .containsExactly("3", "4");
            assertThat(list.body().path("jobs").get(0).path("sources").get(0).asText())
                .isEqualTo(JsonHttp.format(worker3.localAddress()));
            allReduceThroughItsShard(node, worker3, 3, 1);
            allReduceThroughItsShard(node, worker4, 4, 0);
            assertThat(JsonHttp.call(client, "DELETE", URI.create(base + "/3"), null,
                Duration.ofSeconds(5)).status()).isEqualTo(200);
            assertThat(JsonHttp.call(client, "GET", URI.create(base + "/3"), null, Duration.ofSeconds(5)).status())
                .isEqualTo(404);
            assertThat(JsonHttp.call(client, "GET", URI.create(base), null, Duration.ofSeconds(5)).body()
                .path("jobs").findValuesAsText("jobId")).containsExactly("4");
        }
        finally
        {
            worker3.close();
            worker4.close();
        }
    }

    /** A one-worker all-reduce of job {@code jobId} through {@code node}, summed by shard {@code shard}. */
    private static void allReduceThroughItsShard(final SwitchNode node, final UdpTransport worker, final int jobId,
        final int shard) throws Exception
    {
        final int[] in = new int[1000];
        Arrays.setAll(in, k -> 5 * k - 2_000);
        final int[] out = new int[in.length];
        assertThat(worker.addPeer(node.localAddress())).isZero();
        try (AllReduceJob job = AllReduceJob.open(new JobContext().jobId(jobId).workerId(0).workers(1)
            .transport(worker).peerTimeout(Duration.ofSeconds(10)).retransmitTimeout(Duration.ofMillis(5))))
        {
            job.allReduce(in, out);
        }
        assertThat(out).as("a one-worker sum is its input").isEqualTo(in);
        assertThat(node.counter(SwitchCounter.CONTRIBUTIONS, shard)).as("shard %d", shard).isPositive();
        assertThat(node.counter(SwitchCounter.DROP_UNKNOWN_JOB)).isZero();
    }

    @Test
    void shouldSayWhyShardsCannotBeSteeredAndFreeThePort() throws Exception
    {
        final InetSocketAddress port = LoopbackPorts.free();
        // Without batch I/O the switch holds no descriptor to attach the steering program through.
        System.setProperty(UdpTransport.BATCH_PROP_NAME, "false");
        try
        {
            assertThatThrownBy(() -> SwitchNode.launch(new SwitchContext().bind(port)
                .jobs(List.of(new SwitchJobConfig(1, 1, 16, 64))).open(true).shards(2)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("--shards 2: cannot have the kernel steer udp://127.0.0.1:" + port.getPort())
                .hasMessageContaining("batch I/O");
        }
        finally
        {
            System.clearProperty(UdpTransport.BATCH_PROP_NAME);
        }
        LoopbackPorts.assertFree(port, "a failed sharded launch frees its port");
    }

    @Test
    void shouldRefuseShardsWhereTheyCannotRun()
    {
        final SwitchContext base = new SwitchContext().jobs(List.of(JOB)).open(true);
        assertThatThrownBy(() -> base.shards(0).conclude()).hasMessage("--shards must be in 1..64, got 0");
        assertThatThrownBy(() -> new SwitchContext().jobs(List.of(JOB)).open(true).defaultLanes(0).conclude())
            .hasMessage("the switch's default lanes must be in 1.." + InaggHeader.MAX_ELEMENTS_FOR_1500_MTU
                + ", got 0");
        assertThatThrownBy(() -> new SwitchContext().jobs(List.of(JOB)).open(true).shards(2)
            .transportOpener((message, peers, learned) -> { throw new AssertionError("not opened"); }).conclude())
            .hasMessageContaining("DPDK");
        assertThatThrownBy(() -> new SwitchContext().jobs(List.of(JOB)).open(true).localWorkers(new int[] {0})
            .upstream(new InetSocketAddress("127.0.0.1", 9100)).shards(2).conclude())
            .hasMessageContaining("--upstream");
    }

    @Test
    void shouldCloseWhatItOpenedWhenLaunchFails() throws Exception
    {
        final InetSocketAddress port = LoopbackPorts.free();
        final AtomicInteger countersClosed = new AtomicInteger();
        final SwitchContext tooSmall = new SwitchContext().bind(port).maxPeers(1)
            .jobs(List.of(new SwitchJobConfig(5, 2, 16, 64)))
            .sources(Map.of(5, new InetSocketAddress[] {new InetSocketAddress("127.0.0.1", 9101),
                new InetSocketAddress("127.0.0.1", 9102)}))
            .counters(where -> new org.inagg.agent.CounterRegistry(128), countersClosed::incrementAndGet);

        assertThatThrownBy(() -> SwitchNode.launch(tooSmall)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("job 5").hasMessageContaining("raise --max-peers");
        assertThat(countersClosed).hasValue(1);
        LoopbackPorts.assertFree(port, "a failed launch frees its port");
    }

    @Test
    void shouldCloseEveryShardsTransportWhenOneShardsDecoratorFails() throws Exception
    {
        // Shard 0 is decorated (e.g. its capture file opened) before shard 1's decorator throws: both shards' sockets
        // and shard 0's decoration are closed, and the port is free again.
        final InetSocketAddress port = LoopbackPorts.free();
        final AtomicInteger decorationsClosed = new AtomicInteger();
        final SwitchContext failing = new SwitchContext().bind(port).open(true).shards(2)
            .jobs(List.of(new SwitchJobConfig(2, 1, 16, 64), new SwitchJobConfig(3, 1, 16, 64)))
            .decorator((shard, transport, headers) ->
            {
                if (shard == 1)
                {
                    throw new IllegalStateException("--pcap: cannot create s.shard1.pcap");
                }
                return new TransportDecorator(transport)
                {
                    @Override
                    public void close()
                    {
                        decorationsClosed.incrementAndGet();
                        super.close();
                    }
                };
            });
        assertThatThrownBy(() -> SwitchNode.launch(failing)).hasMessage("--pcap: cannot create s.shard1.pcap");
        assertThat(decorationsClosed).as("shard 0's decoration closed once").hasValue(1);
        LoopbackPorts.assertFree(port, "a failed sharded launch frees its port");
    }
}
