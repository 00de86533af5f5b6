package org.inagg.services.switchcontrol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;
import org.inagg.wire.InaggHeader;

/**
 * Fuzzes the body of {@code PUT /v1/jobs/{id}} on a software switch's control port ({@link JobRequest#parse},
 * docs/fuzzing.md). Invariants: bad bytes fail with a 400 {@link HttpFailure} whose message is not blank, never another
 * exception; an accepted body is within every documented bound, written back as JSON parses to the same request, and
 * the switch's job made of it either builds or is refused with the {@link IllegalArgumentException} the control port
 * answers 409 with.
 */
class JobRequestFuzzTest
{
    private static final int JOB_ID = 7;

    @FuzzTest(maxDuration = "10s")
    void shouldRejectABadJobBodyWithA400AndRoundTripAGoodOne(final byte[] body)
    {
        final JobRequest request;
        try
        {
            request = JobRequest.parse(body);
        }
        catch (final HttpFailure e)
        {
            assertThat(e.status()).isEqualTo(HttpFailure.BAD_REQUEST);
            assertThat(e.getMessage()).isNotBlank();
            return;
        }
        assertThat(request.workers()).isBetween(1, 1 << 16);
        assertThat(request.slots()).isBetween(1, InaggHeader.MAX_SLOTS - 1);
        assertThat(request.lanes()).isBetween(1, InaggHeader.MAX_ELEMENT_COUNT);
        assertThat(request.slotBase()).isGreaterThanOrEqualTo(-1);
        assertThat(request.session()).isBetween(0, 0xFFFF);
        assertThat(request.sources()).hasSize(request.workers()).allSatisfy(source ->
        {
            assertThat(source.isUnresolved()).isFalse();
            assertThat(source.getAddress().getAddress()).hasSize(4);
            assertThat(source.getPort()).isBetween(1, 65535);
        });

        final ObjectNode again = JsonHttp.MAPPER.createObjectNode().put("workers", request.workers())
            .put("slots", request.slots()).put("lanes", request.lanes()).put("slotBase", request.slotBase())
            .put("session", request.session());
        final ArrayNode sources = again.putArray("sources");
        request.sources().forEach(source -> sources.add(JsonHttp.format(source)));
        if (request.joinCredentials() != null)
        {
            assertThat(request.joinCredentials()).hasSize(request.workers());
            final ArrayNode credentials = again.putArray("joinCredentials");
            for (final long credential : request.joinCredentials())
            {
                credentials.add(String.format("%016x", credential));
            }
        }
        assertThat(JobRequest.parse(again.toString().getBytes(StandardCharsets.UTF_8))).isEqualTo(request);

        final int[] peers = new int[request.workers()];
        for (int w = 0; w < peers.length; w++)
        {
            peers[w] = w;
        }
        final SwitchJobConfig config;
        try
        {
            config = request.config(JOB_ID, peers);
        }
        catch (final IllegalArgumentException e)
        {
            assertThat(e.getMessage()).isNotBlank().contains("job " + JOB_ID);
            return;
        }
        assertThat(config.workers()).isEqualTo(request.workers());
        assertThat(config.session()).isEqualTo(request.session());
        assertThat(config.workerPeers()).containsExactly(peers);
        assertThat(config.joinCredentials()).isEqualTo(request.joinCredentials());
    }
}
