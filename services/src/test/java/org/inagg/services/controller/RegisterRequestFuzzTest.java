package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;

/**
 * Fuzzes the controller's registration body ({@link RegisterRequest#parse}, docs/fuzzing.md), the request any host on
 * the network can send it. Invariants: bad bytes fail with a 400 {@link HttpFailure} whose message is not blank, never
 * another exception; a body it accepts is within every documented bound, and written back as JSON parses to the same
 * request.
 */
class RegisterRequestFuzzTest
{
    @FuzzTest(maxDuration = "10s")
    void shouldRejectABadRegistrationWithA400AndRoundTripAGoodOne(final byte[] body)
    {
        final RegisterRequest request;
        try
        {
            request = RegisterRequest.parse(body);
        }
        catch (final HttpFailure e)
        {
            assertThat(e.status()).isEqualTo(HttpFailure.BAD_REQUEST);
            assertThat(e.getMessage()).isNotBlank();
            return;
        }
        assertThat(request.rank()).isBetween(0, request.world() - 1);
        assertThat(request.dtype()).isIn("float32", "int32");
        assertThat(request.elements()).isBetween(1L, (long)Integer.MAX_VALUE);
        assertThat(request.source().getPort()).isBetween(1, 65535);
        assertThat(request.source().isUnresolved()).isFalse();
        assertThat(RegisterRequest.NAME.matcher(request.name()).matches()).isTrue();
        final ObjectNode again = JsonHttp.MAPPER.createObjectNode().put("name", request.name())
            .put("rank", request.rank()).put("world", request.world()).put("dtype", request.dtype())
            .put("elements", request.elements()).put("host", request.source().getAddress().getHostAddress())
            .put("port", request.source().getPort());
        if (request.slots() > 0)
        {
            again.put("slots", request.slots());
        }
        if (request.incarnation() != null)
        {
            again.put("incarnation", request.incarnation());
        }
        assertThat(RegisterRequest.parse(again.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)))
            .isEqualTo(request);
    }
}
