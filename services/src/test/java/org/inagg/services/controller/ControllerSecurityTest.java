package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.inagg.services.http.ApiToken;
import org.inagg.services.http.HttpServers;
import org.inagg.services.http.IdleConnections;
import org.inagg.services.http.JsonHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on the controller by another tenant of a shared cluster (issue 24): taking over a rank, freeing or listing
 * another's job, registering a source it does not send from, and the start-up settings that left the port open.
 */
class ControllerSecurityTest
{
    private static final String VICTIM_SECRET = "victim-job-secret-0001";
    private static final String STRANGER_SECRET = "stranger-job-secret-01";
    private static final ApiToken OPERATOR = ApiToken.of("operator-token-1", "test");

    @TempDir
    Path dir;

    private final FakeSwitch fake = new FakeSwitch();
    private final HttpClient client = HttpClient.newHttpClient();
    private Controller controller;

    @AfterEach
    void tearDown()
    {
        client.close();
        if (controller != null)
        {
            controller.close();
        }
    }

    private Controller start(final ControllerContext ctx)
    {
        controller = Controller.launch(ctx.journal(dir.resolve("journal")).poolSlots(32).defaultSlots(8)
            .switchBackend(fake).operatorToken(OPERATOR));
        return controller;
    }

    private Controller start()
    {
        return start(new ControllerContext().bind(new InetSocketAddress("127.0.0.1", 0)));
    }

    private JsonHttp.Answer call(final String method, final String path, final String body, final String secret,
        final ApiToken token) throws IOException
    {
        final Map<String, String> headers = new HashMap<>();
        if (secret != null)
        {
            headers.put(JobSecret.HEADER, secret);
        }
        return JsonHttp.call(client, method, URI.create(controller.url() + path),
            body == null ? null : JsonHttp.MAPPER.readTree(body), Duration.ofSeconds(20), token, headers);
    }

    private JsonHttp.Answer call(final String method, final String path, final String body, final String secret)
        throws IOException
    {
        return call(method, path, body, secret, ApiToken.NONE);
    }

    private static String rank(final String name, final int rank, final int world, final String host, final int port)
    {
        return "{\"name\":\"" + name + "\",\"rank\":" + rank + ",\"world\":" + world + ",\"dtype\":\"int32\","
            + "\"elements\":1000,\"host\":\"" + host + "\",\"port\":" + port + "}";
    }

    /** The victim's two ranks registered with their shared secret: the job runs. */
    private void runVictim() throws IOException
    {
        assertThat(call("POST", "/v1/registrations", rank("victim", 0, 2, "127.0.0.1", 40000), VICTIM_SECRET)
            .status()).isEqualTo(202);
        assertThat(call("POST", "/v1/registrations", rank("victim", 1, 2, "127.0.0.1", 40001), VICTIM_SECRET)
            .status()).isEqualTo(200);
    }

    @Test
    @Timeout(20)
    void shouldRefuseAStrangerTakingOverARankOfARunningJob() throws IOException
    {
        start();
        runVictim();
        final int installs = fake.installs.size();

        for (final String secret : new String[]{null, STRANGER_SECRET})
        {
            final JsonHttp.Answer takeover = call("POST", "/v1/registrations",
                rank("victim", 1, 2, "127.0.0.1", 45555), secret);
            assertThat(takeover.status()).as(takeover.describe()).isEqualTo(403);
            assertThat(takeover.describe()).contains("job 'victim'").contains(JobSecret.HEADER);
        }
        assertThat(fake.installs).as("the switch was not reprogrammed with the stranger's source").hasSize(installs);
        assertThat(fake.jobs.values().iterator().next().sources()).extracting(InetSocketAddress::getPort)
            .containsExactly(40000, 40001);
    }

    @Test
    @Timeout(20)
    void shouldRefuseAStrangerFreeingOrReadingAnotherTenantsJobButNotItsOwnersOrTheOperator() throws IOException
    {
        start();
        runVictim();

        final JsonHttp.Answer free = call("DELETE", "/v1/jobs/victim", null, STRANGER_SECRET);
        assertThat(free.status()).isEqualTo(403);
        assertThat(free.describe()).contains("may not free job 'victim'");
        assertThat(call("DELETE", "/v1/jobs/victim", null, null).status()).isEqualTo(403);
        assertThat(call("GET", "/v1/jobs/victim", null, null).status()).isEqualTo(403);
        assertThat(controller.jobCount()).isEqualTo(1);

        assertThat(call("GET", "/v1/jobs/victim", null, VICTIM_SECRET).status()).isEqualTo(200);
        assertThat(call("DELETE", "/v1/jobs/victim", null, null, OPERATOR).status()).isEqualTo(200);
        assertThat(controller.jobCount()).isZero();
    }

    @Test
    @Timeout(20)
    void shouldKeepRequiringTheJobsSecretAfterAControllerRestartWithoutJournalingTheSecretItself() throws IOException
    {
        start();
        runVictim();
        controller.close();
        assertThat(Files.readString(dir.resolve("journal"))).contains(JobSecret.hash(VICTIM_SECRET))
            .doesNotContain(VICTIM_SECRET);

        start();
        assertThat(controller.jobCount()).isEqualTo(1);
        assertThat(call("POST", "/v1/registrations", rank("victim", 1, 2, "127.0.0.1", 45555), STRANGER_SECRET)
            .status()).isEqualTo(403);
        assertThat(call("DELETE", "/v1/jobs/victim", null, null).status()).isEqualTo(403);
        assertThat(call("DELETE", "/v1/jobs/victim", null, VICTIM_SECRET).status()).isEqualTo(200);
    }

    @Test
    @Timeout(20)
    void shouldRefuseRenewingOrDeletingAnotherJobsRegistrationWithoutItsSecret() throws IOException
    {
        start();
        final String id = call("POST", "/v1/registrations", rank("victim", 0, 2, "127.0.0.1", 40000), VICTIM_SECRET)
            .body().path("registration").asText();
        assertThat(id).matches("[0-9a-f]{32}");

        assertThat(call("DELETE", "/v1/registrations/" + id, null, STRANGER_SECRET).status()).isEqualTo(403);
        assertThat(call("PUT", "/v1/registrations/" + id + "/lease", null, null).status()).isEqualTo(403);
        assertThat(call("GET", "/v1/registrations/" + id, null, null).status()).isEqualTo(403);
        assertThat(controller.jobCount()).isEqualTo(1);
        assertThat(call("PUT", "/v1/registrations/" + id + "/lease", null, VICTIM_SECRET).status()).isEqualTo(200);
        assertThat(call("DELETE", "/v1/registrations/" + id, null, VICTIM_SECRET).status()).isEqualTo(200);
        assertThat(controller.jobCount()).isZero();
    }

    @Test
    @Timeout(20)
    void shouldGiveTheFirstRankASecretThatTheJobsOtherRanksMustShow() throws IOException
    {
        start();
        final JsonHttp.Answer first = call("POST", "/v1/registrations", rank("solo", 0, 2, "127.0.0.1", 40000), null);
        final String secret = first.body().path("jobSecret").asText();
        assertThat(secret).matches("[A-Za-z0-9_-]{43}");
        assertThat(call("POST", "/v1/registrations", rank("solo", 1, 2, "127.0.0.1", 40001), null).status())
            .isEqualTo(403);
        final JsonHttp.Answer second = call("POST", "/v1/registrations", rank("solo", 1, 2, "127.0.0.1", 40001),
            secret);
        assertThat(second.status()).isEqualTo(200);
        assertThat(second.body().has("jobSecret")).as("only the job's first registration is given it").isFalse();
        assertThat(call("POST", "/v1/registrations", rank("x", 0, 1, "127.0.0.1", 40002), "short").status())
            .isEqualTo(400);
    }

    @Test
    @Timeout(20)
    void shouldLetTheJavaClientKeepTheSecretOfItsFirstAnswerForItsLaterCalls()
    {
        start();
        try (ControllerClient rank = new ControllerClient(controller.url(), Duration.ofSeconds(5), ApiToken.NONE, null))
        {
            rank.register("learnt", 0, 1, "int32", 1000, new InetSocketAddress("127.0.0.1", 40000), 0,
                Duration.ofSeconds(5));
            assertThat(rank.jobSecret()).matches("[A-Za-z0-9_-]{43}");
            assertThat(controller.jobCount()).isEqualTo(1);
        }
        assertThat(controller.jobCount()).as("its DELETE showed the secret it was given").isZero();
    }

    @Test
    @Timeout(20)
    void shouldRefuseASourceOtherThanTheAddressTheRequestComesFrom() throws IOException
    {
        start();
        final JsonHttp.Answer foreign = call("POST", "/v1/registrations", rank("spoof", 0, 2, "10.9.9.9", 40000),
            VICTIM_SECRET);
        assertThat(foreign.status()).as(foreign.describe()).isEqualTo(403);
        assertThat(foreign.describe()).contains("10.9.9.9").contains("127.0.0.1").contains("--trust-sources");
        assertThat(controller.jobCount()).isZero();
        controller.close();

        start(new ControllerContext().bind(new InetSocketAddress("127.0.0.1", 0)).trustSources(true));
        assertThat(call("POST", "/v1/registrations", rank("spoof", 0, 2, "10.9.9.9", 40000), VICTIM_SECRET)
            .status()).isEqualTo(202);
    }

    @Test
    @Timeout(20)
    void shouldListOnlyTheCallersJobsUnlessTheOperatorAsks() throws IOException
    {
        start();
        runVictim();
        call("POST", "/v1/registrations", rank("mine", 0, 1, "127.0.0.1", 40002), STRANGER_SECRET);

        assertThat(names(call("GET", "/v1/jobs", null, STRANGER_SECRET).body())).isEqualTo("[mine]");
        assertThat(names(call("GET", "/v1/jobs", null, VICTIM_SECRET).body())).isEqualTo("[victim]");
        assertThat(names(call("GET", "/v1/jobs", null, null).body())).isEqualTo("[]");
        assertThat(names(call("GET", "/v1/jobs", null, null, OPERATOR).body())).isEqualTo("[victim, mine]");
    }

    private static String names(final JsonNode jobs)
    {
        final java.util.List<String> names = new java.util.ArrayList<>();
        jobs.path("jobs").forEach(job -> names.add(job.path("name").asText()));
        return names.toString();
    }

    @Test
    @Timeout(20)
    void shouldLetTheOperatorTokenPassWhereTheClusterTokenIsRequired() throws IOException
    {
        start(new ControllerContext().bind(new InetSocketAddress("127.0.0.1", 0))
            .token(ApiToken.of("cluster-token-1", "test")));
        assertThat(call("GET", "/v1/jobs", null, null).status()).isEqualTo(401);
        assertThat(call("GET", "/v1/jobs", null, null, OPERATOR).status()).isEqualTo(200);
    }

    @Test
    void shouldListenOnLoopbackByDefaultAndRefuseAnOpenAddressWithoutATokenUnlessInsecure()
    {
        assertThat(ControllerContext.BIND_DEFAULT).startsWith("127.0.0.1:");
        assertThatIllegalArgumentException().isThrownBy(() -> new ControllerContext().switchBackend(fake)
                .bind(new InetSocketAddress("0.0.0.0", 0)).conclude())
            .withMessageContaining("without a token").withMessageContaining("--insecure")
            .withMessageContaining("INAGG_TOKEN");
        new ControllerContext().switchBackend(fake).bind(new InetSocketAddress("0.0.0.0", 0)).insecure(true)
            .conclude();
        new ControllerContext().switchBackend(fake).bind(new InetSocketAddress("0.0.0.0", 0))
            .token(ApiToken.of("cluster-token-1", "test")).conclude();
    }

    @Test
    void shouldTreatAnEmptyTokenAsAnErrorNotAsNoToken() throws IOException
    {
        assertThatIllegalArgumentException().isThrownBy(() -> ApiToken.fromEnvironment(Map.of(ApiToken.ENV, "")))
            .withMessageContaining(ApiToken.ENV).withMessageContaining("empty");
        assertThatIllegalArgumentException().isThrownBy(() -> ApiToken.fromEnvironment(Map.of(ApiToken.ENV, "  ")))
            .withMessageContaining("empty");
        final Path empty = Files.writeString(dir.resolve("empty"), "\n");
        assertThatIllegalArgumentException().isThrownBy(() -> ApiToken.fromFileOrEnvironment(empty, Map.of()))
            .withMessageContaining("empty");
        assertThat(ApiToken.fromEnvironment(Map.of()).required()).isFalse();
    }

    @Test
    @Timeout(60)
    void shouldServeARealRankWhileAFloodOfIdleConnectionsHoldsABoundedNumberOfThreads() throws Exception
    {
        start();
        try (IdleConnections idle = new IdleConnections(controller.address(), 4 * Controller.HTTP_THREADS))
        {
            Thread.sleep(500);
            final long threads = Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith("inagg-controller-http")).count();
            assertThat(threads).isBetween(1L, (long)Controller.HTTP_THREADS);
            final long begin = System.nanoTime();
            final JsonHttp.Answer answer = IdleConnections.retryWithin(Duration.ofSeconds(20), () -> call("POST",
                "/v1/registrations", rank("busy", 0, 1, "127.0.0.1", 40000), VICTIM_SECRET));
            assertThat(answer.status()).isEqualTo(200);
            assertThat(Duration.ofNanos(System.nanoTime() - begin).toSeconds())
                .isLessThanOrEqualTo(HttpServers.MAX_REQUEST_SECONDS_DEFAULT + 5);
        }
    }

    @Test
    @Timeout(20)
    void shouldAnswerABadEscapeWith400AndAFailureWithoutTheExceptionsText() throws IOException
    {
        start();
        final JsonHttp.Answer escape = call("GET", "/v1/jobs/a%25zz", null, VICTIM_SECRET);
        assertThat(escape.status()).as(escape.describe()).isEqualTo(400);
        assertThat(escape.describe()).contains("field 'name'");
        final JsonHttp.Answer json = call("POST", "/v1/registrations", null, VICTIM_SECRET);
        assertThat(json.status()).isEqualTo(400);

        fake.dataAddressFailure = new IllegalStateException("secret internals at /etc/inagg/private");
        final JsonHttp.Answer failure = call("GET", "/v1/info", null, null);
        assertThat(failure.status()).isEqualTo(500);
        assertThat(failure.describe()).contains("internal error").doesNotContain("/etc/inagg")
            .doesNotContain("IllegalStateException");
    }

    @Test
    @Timeout(120)
    void shouldStopAPlanThatTakesLongerThanTheLimitAndAnswer503NamingIt() throws IOException
    {
        System.setProperty(ControllerContext.PLAN_TIMEOUT_PROP_NAME, "50");
        try
        {
            start();
        }
        finally
        {
            System.clearProperty(ControllerContext.PLAN_TIMEOUT_PROP_NAME);
        }
        final org.inagg.control.topology.Topology big = org.inagg.control.topology.Topologies.fatTree(8, 100, 4,
            org.inagg.control.topology.FabricSpec.uniform100G());
        final String body = "{\"topology\":" + org.inagg.control.topology.TopologyJson.toJson(big)
            + ",\"draws\":4096,\"pathLimit\":64}";
        final JsonHttp.Answer answer = call("POST", "/v1/plans", body, null);
        assertThat(answer.status()).as(answer.describe()).isEqualTo(503);
        assertThat(answer.describe()).contains("longer than the controller's limit of 50 ms")
            .contains("--plan-timeout-ms");
    }
}
