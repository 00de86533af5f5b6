package org.inagg.services.switchcontrol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;
import org.inagg.wire.InaggHeader;

/**
 * Fuzzes the switch control port's {@code PUT /v1/jobs/{id}} body ({@link SwitchControlServer.JobBody#parse}, with the
 * JOIN credentials of issue 24; docs/fuzzing.md). Invariants: bad bytes fail with a 400 {@link HttpFailure} whose
 * message is not blank, never another exception; a body it accepts is within every documented bound (one source and,
 * if any, one credential per worker), and written back as JSON parses to the same job.
 */
class SwitchControlBodyFuzzTest
{
    @FuzzTest(maxDuration = "10s")
    void shouldRejectABadJobBodyWithA400AndRoundTripAGoodOne(final byte[] body)
    {
        final SwitchControlServer.JobBody job;
        try
        {
            job = SwitchControlServer.JobBody.parse(body);
        }
        catch (final HttpFailure e)
        {
            assertThat(e.status()).isEqualTo(HttpFailure.BAD_REQUEST);
            assertThat(e.getMessage()).isNotBlank();
            return;
        }
        assertThat(job.workers()).isBetween(1, 1 << 16);
        assertThat(job.slots()).isBetween(1, InaggHeader.MAX_SLOTS - 1);
        assertThat(job.lanes()).isBetween(1, InaggHeader.MAX_ELEMENT_COUNT);
        assertThat(job.slotBase()).isGreaterThanOrEqualTo(-1);
        assertThat(job.session()).isBetween(0, 0xFFFF);
        assertThat(job.sources()).hasSize(job.workers()).allSatisfy(s -> assertThat(s.isUnresolved()).isFalse());
        if (job.joinCredentials() != null)
        {
            assertThat(job.joinCredentials()).hasSize(job.workers());
        }
        final ObjectNode again = JsonHttp.MAPPER.createObjectNode().put("workers", job.workers())
            .put("slots", job.slots()).put("lanes", job.lanes()).put("slotBase", job.slotBase())
            .put("session", job.session());
        final ArrayNode sources = again.putArray("sources");
        job.sources().forEach(s -> sources.add(JsonHttp.format(s)));
        if (job.joinCredentials() != null)
        {
            final ArrayNode credentials = again.putArray("joinCredentials");
            for (final long credential : job.joinCredentials())
            {
                credentials.add(String.format("%016x", credential));
            }
        }
        final SwitchControlServer.JobBody parsed =
            SwitchControlServer.JobBody.parse(again.toString().getBytes(StandardCharsets.UTF_8));
        assertThat(parsed.sources()).isEqualTo(job.sources());
        assertThat(parsed.joinCredentials()).isEqualTo(job.joinCredentials());
        assertThat(parsed.workers()).isEqualTo(job.workers());
        assertThat(parsed.session()).isEqualTo(job.session());
    }
}
