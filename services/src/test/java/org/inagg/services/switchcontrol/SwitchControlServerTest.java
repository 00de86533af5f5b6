package org.inagg.services.switchcontrol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.http.JsonHttp;
import org.inagg.transport.SourceRegistry;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The software switch's control port: jobs with registered sources in and out, errors naming the cause. */
class SwitchControlServerTest
{
    private UdpTransport transport;
    private SoftwareSwitch softwareSwitch;
    private SwitchControlServer control;
    private AgentRunner runner;
    private HttpClient client;

    @BeforeEach
    void setUp()
    {
        transport = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0), List.of(), 16,
            InaggHeader.messageLength(256), 16);
        softwareSwitch = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        softwareSwitch.addJob(new SwitchJobConfig(5, 2)); // an open-mode job from --job
        control = SwitchControlServer.launch(new SwitchControlServer.Context().softwareSwitch(softwareSwitch)
            .transport(transport).bind(new InetSocketAddress("127.0.0.1", 0)));
        runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null,
            new CompositeAgent(softwareSwitch, control));
        AgentRunner.startOnThread(runner);
        client = HttpClient.newHttpClient();
    }

    @AfterEach
    void tearDown()
    {
        client.close();
        runner.close();
        control.close();
    }

    private JsonHttp.Answer call(final String method, final String path, final String body) throws IOException
    {
        return JsonHttp.call(client, method, URI.create("http://127.0.0.1:" + control.address().getPort() + path),
            body == null ? null : JsonHttp.MAPPER.readTree(body), Duration.ofSeconds(5));
    }

    @Test
    @Timeout(20)
    void shouldInstallAJobWithRegisteredSourcesReplaceItAndRemoveIt() throws IOException
    {
        final JsonHttp.Answer put = call("PUT", "/v1/jobs/3", "{\"workers\":2,\"slots\":8,\"lanes\":64,\"slotBase\":0,"
            + "\"session\":4,\"sources\":[\"127.0.0.1:40000\",\"127.0.0.1:40001\"]}");
        assertThat(put.status()).as(put.describe()).isEqualTo(200);
        assertThat(put.body().path("sources").toString()).isEqualTo("[\"127.0.0.1:40000\",\"127.0.0.1:40001\"]");
        final SwitchJobConfig installed = softwareSwitch.jobs().get(3);
        assertThat(installed.registeredSources()).isTrue();
        assertThat(transport.peerAddress(installed.workerPeer(1))).isEqualTo(new InetSocketAddress("127.0.0.1", 40001));
        assertThat(installed.session()).isEqualTo(4);

        final JsonHttp.Answer list = call("GET", "/v1/jobs", null);
        assertThat(list.body().path("data").asText()).isEqualTo(JsonHttp.format(transport.localAddress()));
        assertThat(list.body().path("defaultLanes").asInt()).as("a switch not told its MTU's lanes: the P4 programs'")
            .isEqualTo(SwitchJobConfig.DEFAULT_LANES);
        assertThat(list.body().path("jobs")).hasSize(2);
        assertThat(list.body().path("jobs").get(1).path("sources").isNull()).as("job 5 is open mode").isTrue();

        final JsonHttp.Answer overlap = call("PUT", "/v1/jobs/4", "{\"workers\":1,\"slots\":8,\"lanes\":64,"
            + "\"slotBase\":4,\"session\":1,\"sources\":[\"127.0.0.1:40002\"]}");
        assertThat(overlap.status()).isEqualTo(409);
        assertThat(overlap.describe()).contains("overlap job 3");
        final JsonHttp.Answer bad = call("PUT", "/v1/jobs/4", "{\"workers\":1,\"slots\":8,\"lanes\":64,"
            + "\"session\":1,\"sources\":[\"somehost:1\"]}");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.describe()).contains("field 'sources'").contains("IPv4");
        assertThat(call("PUT", "/v1/jobs/4", "{\"workers\":2,\"slots\":8,\"lanes\":64,\"session\":1,"
            + "\"sources\":[\"127.0.0.1:1\"]}").describe()).contains("array of 2");

        assertThat(call("DELETE", "/v1/jobs/3", null).status()).isEqualTo(200);
        assertThat(softwareSwitch.jobs()).doesNotContainKey(3);
        assertThat(call("DELETE", "/v1/jobs/3", null).status()).isEqualTo(404);
        assertThat(call("GET", "/v1/jobs/x", null).status()).isEqualTo(404);
    }

    @Test
    @Timeout(20)
    void shouldInstallTheWorkersJoinCredentialsAndNeverAnswerThemBack() throws IOException
    {
        final JsonHttp.Answer put = call("PUT", "/v1/jobs/3", "{\"workers\":2,\"slots\":8,\"lanes\":64,\"slotBase\":0,"
            + "\"session\":4,\"sources\":[\"127.0.0.1:40000\",\"127.0.0.1:40001\"],"
            + "\"joinCredentials\":[\"0123456789abcdef\",\"FEDCBA9876543210\"]}");
        assertThat(put.status()).as(put.describe()).isEqualTo(200);
        assertThat(softwareSwitch.jobs().get(3).joinCredentials())
            .containsExactly(0x0123_4567_89AB_CDEFL, 0xFEDC_BA98_7654_3210L);
        assertThat(put.body().toString()).doesNotContainIgnoringCase("0123456789abcdef")
            .doesNotContainIgnoringCase("fedcba9876543210");
        assertThat(call("GET", "/v1/jobs", null).body().toString()).doesNotContainIgnoringCase("0123456789abcdef");

        final JsonHttp.Answer shortOne = call("PUT", "/v1/jobs/4", "{\"workers\":1,\"slots\":8,\"lanes\":64,"
            + "\"session\":1,\"sources\":[\"127.0.0.1:40002\"],\"joinCredentials\":[\"0123\"]}");
        assertThat(shortOne.status()).isEqualTo(400);
        assertThat(shortOne.describe()).contains("field 'joinCredentials'").contains("16 hex digits");
        assertThat(call("PUT", "/v1/jobs/4", "{\"workers\":1,\"slots\":8,\"lanes\":64,\"session\":1,"
            + "\"sources\":[\"127.0.0.1:40002\"],\"joinCredentials\":[]}").describe()).contains("array of 1");
        assertThat(softwareSwitch.jobs()).doesNotContainKey(4);
    }

    @Test
    @Timeout(30)
    void shouldFreeTheSourcesOfRemovedAndReplacedJobsSoThePeerTableNeverFills() throws IOException
    {
        // The transport holds 16 peers: without freeing, the third 8-worker job would be refused with a 503.
        for (int round = 0; round < 11; round++)
        {
            final StringBuilder sources = new StringBuilder();
            for (int w = 0; w < 8; w++)
            {
                sources.append(w == 0 ? "" : ",").append("\"127.0.0.1:").append(41_000 + round * 8 + w).append('"');
            }
            final JsonHttp.Answer put = call("PUT", "/v1/jobs/3", "{\"workers\":8,\"slots\":8,\"lanes\":64,"
                + "\"session\":" + (round % 2 == 0 ? 1 : 2) + ",\"sources\":[" + sources + "]}");
            assertThat(put.status()).as("round %d: %s", round, put.describe()).isEqualTo(200);
            if (round % 3 == 2)
            {
                assertThat(call("DELETE", "/v1/jobs/3", null).status()).isEqualTo(200);
            }
        }
        // Only the last job's 8 sources remain registered.
        final SwitchJobConfig last = softwareSwitch.jobs().get(3);
        for (int w = 0; w < 8; w++)
        {
            assertThat(transport.peerAddress(last.workerPeer(w))).isEqualTo(
                new InetSocketAddress("127.0.0.1", 41_000 + 10 * 8 + w));
        }
        assertThat(java.util.stream.IntStream.range(0, 16).filter(peer -> transport.peerAddress(peer) != null))
            .as("peers registered").hasSize(8);
    }

    @Test
    @Timeout(30)
    void shouldApplyEachShardsRequestsOnThatShardsThread() throws Exception
    {
        // SourceRegistry#addPeer is not thread-safe: a job's sources must be registered by the thread of its shard
        // (job id % shards), never by an HTTP thread or another shard's.
        final List<UdpTransport> transports = new java.util.ArrayList<>();
        final List<SoftwareSwitch> switches = new java.util.ArrayList<>();
        final List<List<Thread>> callers = List.of(new java.util.concurrent.CopyOnWriteArrayList<>(),
            new java.util.concurrent.CopyOnWriteArrayList<>());
        final List<SourceRegistry> registries = new java.util.ArrayList<>();
        for (int shard = 0; shard < 2; shard++)
        {
            final UdpTransport shardTransport = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0), List.of(), 16,
                InaggHeader.messageLength(256), 16);
            transports.add(shardTransport);
            switches.add(new SoftwareSwitch(shardTransport, new CounterRegistry(64), 16));
            registries.add(recordingCallers(shardTransport, callers.get(shard)));
        }
        final SwitchControlServer sharded = SwitchControlServer.launch(new SwitchControlServer.Context()
            .shards(switches, registries).bind(new InetSocketAddress("127.0.0.1", 0)));
        final List<AgentRunner> runners = new java.util.ArrayList<>();
        try
        {
            for (int shard = 0; shard < 2; shard++)
            {
                final AgentRunner shardRunner = new AgentRunner(new SleepingMillisIdleStrategy(1),
                    Throwable::printStackTrace, null, new CompositeAgent(switches.get(shard), sharded.agent(shard)));
                AgentRunner.startOnThread(shardRunner);
                runners.add(shardRunner);
            }
            final String url = "http://127.0.0.1:" + sharded.address().getPort();
            for (final int job : new int[] {3, 4, 5})
            {
                final JsonHttp.Answer put = JsonHttp.call(client, "PUT", URI.create(url + "/v1/jobs/" + job),
                    JsonHttp.MAPPER.readTree("{\"workers\":1,\"slots\":4,\"lanes\":64,\"slotBase\":" + job * 4
                        + ",\"session\":1,\"sources\":[\"127.0.0.1:" + (42_000 + job) + "\"]}"),
                    Duration.ofSeconds(5));
                assertThat(put.status()).as(put.describe()).isEqualTo(200);
            }
            assertThat(switches.get(0).jobs()).containsOnlyKeys(4);
            assertThat(switches.get(1).jobs()).containsOnlyKeys(3, 5);
            assertThat(callers.get(0)).as("shard 0's registrations").containsExactly(runners.get(0).thread());
            assertThat(callers.get(1)).as("shard 1's registrations").containsExactly(runners.get(1).thread(),
                runners.get(1).thread());
        }
        finally
        {
            runners.forEach(AgentRunner::close);
            sharded.close();
            transports.forEach(UdpTransport::close);
        }
    }

    /** {@code registry}, noting the thread of every {@link SourceRegistry#addPeer}. */
    private static SourceRegistry recordingCallers(final SourceRegistry registry, final List<Thread> callers)
    {
        return new SourceRegistry()
        {
            @Override
            public int addPeer(final InetSocketAddress source)
            {
                callers.add(Thread.currentThread());
                return registry.addPeer(source);
            }

            @Override
            public boolean removePeer(final int peer)
            {
                return registry.removePeer(peer);
            }

            @Override
            public InetSocketAddress peerAddress(final int peer)
            {
                return registry.peerAddress(peer);
            }

            @Override
            public InetSocketAddress localAddress()
            {
                return registry.localAddress();
            }
        };
    }
}
