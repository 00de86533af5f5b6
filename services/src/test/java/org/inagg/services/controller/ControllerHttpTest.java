package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.control.plan.PlanJson;
import org.inagg.services.http.ApiToken;
import org.inagg.services.http.JsonHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The controller's HTTP surface: status codes, errors naming what is wrong, the plans endpoint (docs/controller.md). */
class ControllerHttpTest
{
    private static final String JOB_SECRET = "http-test-job-secret-0001";
    @TempDir
    Path dir;

    private Controller controller;
    private HttpClient client;

    @BeforeEach
    void setUp()
    {
        controller = Controller.launch(new ControllerContext().bind(new InetSocketAddress("127.0.0.1", 0))
            .journal(dir.resolve("journal")).poolSlots(32).defaultSlots(16).switchBackend(new FakeSwitch()));
        client = HttpClient.newHttpClient();
    }

    @AfterEach
    void tearDown()
    {
        client.close();
        controller.close();
    }

    private JsonHttp.Answer call(final String method, final String path, final String body) throws IOException
    {
        return JsonHttp.call(client, method, URI.create(controller.url() + path),
            body == null ? null : JsonHttp.MAPPER.readTree(body), Duration.ofSeconds(5), ApiToken.NONE,
            Map.of(JobSecret.HEADER, JOB_SECRET));
    }

    private static String register(final String name, final int rank, final int world, final int port)
    {
        return "{\"name\":\"" + name + "\",\"rank\":" + rank + ",\"world\":" + world + ",\"dtype\":\"float32\","
            + "\"elements\":1000000,\"host\":\"127.0.0.1\",\"port\":" + port + "}";
    }

    @Test
    @Timeout(20)
    void shouldRefuseEveryRequestWithoutTheTokenWhenItHasOne() throws IOException
    {
        final ApiToken token = ApiToken.of("s3cret-token", "test");
        try (Controller guarded = Controller.launch(new ControllerContext().bind(new InetSocketAddress("127.0.0.1", 0))
            .journal(dir.resolve("guarded")).poolSlots(32).defaultSlots(16).switchBackend(new FakeSwitch())
            .token(token)))
        {
            final URI registrations = URI.create(guarded.url() + "/v1/registrations");
            final JsonHttp.Answer none = JsonHttp.call(client, "POST", registrations,
                JsonHttp.MAPPER.readTree(register("a", 0, 2, 40000)), Duration.ofSeconds(5));
            assertThat(none.status()).isEqualTo(401);
            assertThat(none.describe()).contains("needs a token").contains("INAGG_TOKEN");
            final JsonHttp.Answer wrong = JsonHttp.call(client, "GET", URI.create(guarded.url() + "/v1/jobs"), null,
                Duration.ofSeconds(5), ApiToken.of("s3cret-tokem", "test"));
            assertThat(wrong.status()).isEqualTo(401);
            assertThat(wrong.describe()).contains("wrong token");

            final JsonHttp.Answer right = JsonHttp.call(client, "POST", registrations,
                JsonHttp.MAPPER.readTree(register("a", 0, 2, 40000)), Duration.ofSeconds(5), token);
            assertThat(right.status()).as(right.describe()).isEqualTo(202);
            assertThat(JsonHttp.call(client, "GET", URI.create(guarded.url() + "/v1/jobs"), null,
                Duration.ofSeconds(5), token).status()).isEqualTo(200);
        }
    }

    @Test
    @Timeout(20)
    void shouldAnswerEachErrorWithItsStatusAndAMessageNamingTheCause() throws IOException
    {
        assertThat(call("POST", "/v1/registrations", "{\"name\":\"a\",\"rank\":0,\"world\":2}"))
            .satisfies(a -> assertThat(a.status()).isEqualTo(400))
            .satisfies(a -> assertThat(a.describe()).isEqualTo("field 'dtype' is missing"));
        assertThat(call("POST", "/v1/registrations", register("a", 0, 2, 40000).replace("\"port\"", "\"prot\""))
            .describe()).startsWith("unknown field 'prot'");
        assertThat(call("POST", "/v1/registrations", register("a", 0, 2, 40000)).status()).isEqualTo(202);
        final JsonHttp.Answer mismatch = call("POST", "/v1/registrations", register("a", 1, 3, 40001));
        assertThat(mismatch.status()).isEqualTo(409);
        assertThat(mismatch.describe()).contains("world size 3").contains("admitted with 2");
        final JsonHttp.Answer full = call("POST", "/v1/registrations", register("b", 0, 1, 40002)
            .replace("}", ",\"slots\":30}"));
        assertThat(full.status()).isEqualTo(503);
        assertThat(full.describe()).contains("no free slots for job 'b'");
        assertThat(call("GET", "/v1/jobs/nope", null).status()).isEqualTo(404);
        assertThat(call("GET", "/v1/jobs/nope", null).describe()).isEqualTo("unknown job 'nope'");
        assertThat(call("GET", "/v1/registrations/123", null).status()).isEqualTo(410);
        assertThat(call("DELETE", "/v1/registrations/123", null).status()).isEqualTo(404);
        assertThat(call("GET", "/v1/nothing", null).status()).isEqualTo(404);
        assertThat(call("PUT", "/v1/jobs", null).status()).isEqualTo(405);
        final JsonNode jobs = call("GET", "/v1/jobs", null).body();
        assertThat(jobs.path("jobs")).hasSize(1);
        assertThat(jobs.path("jobs").get(0).path("registered").asInt()).isEqualTo(1);
        assertThat(jobs.path("jobs").get(0).path("state").asText()).isEqualTo("waiting");
        assertThat(call("DELETE", "/v1/jobs/a", null).status()).isEqualTo(200);
        assertThat(controller.jobCount()).isZero();
    }

    @Test
    @Timeout(60)
    void shouldServeAGridPlanThatDeployReadsForAPostedTopology() throws IOException
    {
        final ObjectNode request = JsonHttp.MAPPER.createObjectNode();
        try (InputStream topology = getClass().getResourceAsStream("grid-example.json"))
        {
            request.set("topology", JsonHttp.MAPPER.readTree(topology));
        }
        request.put("draws", 8);
        final JsonHttp.Answer plan = JsonHttp.call(client, "POST", URI.create(controller.url() + "/v1/plans"),
            request, Duration.ofSeconds(50));
        assertThat(plan.status()).as(plan.describe()).isEqualTo(200);
        assertThat(plan.body().path("schema").asText()).isEqualTo(PlanJson.SCHEMA);
        assertThat(PlanJson.read(plan.body().toString())).isNotNull();
        final JsonHttp.Answer bad = call("POST", "/v1/plans", "{\"topology\":{\"name\":\"x\"}}");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.describe()).startsWith("field 'topology'");
    }
}
