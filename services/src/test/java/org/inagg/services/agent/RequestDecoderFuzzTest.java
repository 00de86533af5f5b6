package org.inagg.services.agent;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import com.code_intelligence.jazzer.junit.FuzzTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes what the agent reads from a rank ({@link RequestDecoder}, docs/fuzzing.md): a hello frame and a request in a
 * slot descriptor. Invariants: anything malformed is an {@link AgentProtocolException} with a message and a code,
 * never another exception; what it accepts is within the bounds the agent relies on (ranks inside the world, a key
 * of 1..208 bytes, a collective timeout that is not negative, a count that fits the slot, the expected sequence, a
 * ready count that grows up to the count, and is the count for a round that is not a sum).
 */
class RequestDecoderFuzzTest
{
    @FuzzTest(maxDuration = "10s")
    void shouldRejectMalformedInputWithAMessageAndAcceptOnlyWhatFits(final byte[] input)
    {
        final ByteBuffer frame = ByteBuffer.wrap(input);
        try
        {
            final Hello hello = RequestDecoder.decodeHello(frame);
            assertThat(hello.rank()).isBetween(0, hello.worldSize() - 1);
            assertThat(hello.localRank()).isBetween(0, hello.localWorldSize() - 1);
            assertThat(hello.localWorldSize()).isBetween(1, Math.min(hello.worldSize(), AgentProtocol.MAX_LOCAL_RANKS));
            assertThat(hello.hostIndex()).isBetween(0, hello.hosts() - 1);
            assertThat(hello.jobKey()).isNotEmpty();
            assertThat(hello.collectiveTimeoutMs()).isNotNegative();
        }
        catch (final AgentProtocolException e)
        {
            assertThat(e.getMessage()).isNotBlank();
            assertThat(e.code()).isPositive();
        }

        final MemorySegment descriptor = MemorySegment.ofArray(java.util.Arrays.copyOf(input,
            Math.max(input.length, SharedRegion.DESCRIPTOR_LENGTH)));
        final long expected = input.length > 0 ? input[0] & 0x7F : 1;
        final long capacity = 4096L * (1 + (input.length > 1 ? input[1] & 0x0F : 0));
        try
        {
            final CollectiveRequest request = RequestDecoder.decodeRequest(descriptor, expected, capacity);
            assertThat(request.sequence()).isEqualTo(expected);
            assertThat(request.count()).isBetween(0L, capacity / 4).isLessThanOrEqualTo(request.total());
            assertThat(request.op()).isIn(AgentProtocol.OP_SUM, AgentProtocol.OP_AVG, AgentProtocol.OP_GATHER,
                AgentProtocol.OP_MIN, AgentProtocol.OP_MAX);
            assertThat(request.gatherFrom()).isNotNegative();
            assertThat(request.gatherLength()).isNotNegative();
            assertThat(request.gatherFrom() + request.gatherLength()).isLessThanOrEqualTo(request.count() * 4);
            assertThat(request.dtype()).isIn(AgentProtocol.DTYPE_FLOAT32, AgentProtocol.DTYPE_INT32);
            final long previous = input.length > 2 ? input[2] & 0x7F : 0;
            final long ready = RequestDecoder.decodeReady(descriptor, request, previous);
            assertThat(ready).isBetween(previous, request.count());
            if (request.op() != AgentProtocol.OP_SUM && request.op() != AgentProtocol.OP_AVG)
            {
                assertThat(ready).isEqualTo(request.count());
            }
        }
        catch (final AgentProtocolException e)
        {
            assertThat(e.getMessage()).isNotBlank();
        }
    }
}
