package org.inagg.p4.esa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.p4.testing.CaptureTransport.deliver;

import java.lang.foreign.MemorySegment;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.Test;

/**
 * Issue 24: the other nodes that answer JOINs, the ESA switch and the parameter server (for the workers a two-level
 * plan sends to it directly), check the JOIN credential as the slot switch does: a JOIN from a worker's registered
 * address that does not show its credential is dropped unanswered and counted under the same name and number (x24).
 */
class EsaJoinCredentialSecurityTest
{
    private static final int JOB = 4;
    private static final long[] CREDENTIALS = {0x1111_2222_3333_4444L, 0x5555_6666_7777_8888L};

    private static byte[] join(final int worker, final long incarnation, final long credential)
    {
        final byte[] bytes = new byte[InaggHeader.joinLength(credential)];
        InaggHeader.writeJoin(MemorySegment.ofArray(bytes), 0, JOB, worker, 2, InaggHeader.ANY_SESSION, incarnation,
            credential);
        return bytes;
    }

    @Test
    void shouldDropAndCountAnEsaJoinWithoutTheWorkersCredential()
    {
        final CaptureTransport transport = new CaptureTransport();
        final EsaSwitch sw = new EsaSwitch(transport, new CounterRegistry(64),
            new EsaSwitchSettings(1, 4, 4, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER, 16));
        sw.addJob(new EsaJobConfig(JOB, 2, 4, 8, 0, new int[] {100, 101}, 9, 1 << 20, CREDENTIALS));
        sw.applyControl();

        deliver(sw, join(1, 0xE71, InaggHeader.NO_CREDENTIAL), 101);
        deliver(sw, join(1, 0xE71, CREDENTIALS[0]), 101);
        assertThat(transport.drain()).as("unanswered").isEmpty();
        assertThat(sw.counter(EsaCounter.DROP_BAD_CREDENTIAL)).isEqualTo(2);
        assertThat(EsaCounter.DROP_BAD_CREDENTIAL.typeId() % 100).isEqualTo(24);

        deliver(sw, join(1, 0xB, CREDENTIALS[1]), 101);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::type).containsExactly(MessageType.JOIN_ACK);
        assertThat(sw.counter(EsaCounter.JOINS)).isEqualTo(1);
    }

    @Test
    void shouldDropAndCountAJoinAtTheParameterServerWithoutTheWorkersCredential()
    {
        final CaptureTransport transport = new CaptureTransport();
        final ParameterServer server = new ParameterServer(transport, new CounterRegistry(64), 16, 8);
        server.addJob(new ServerJobConfig(JOB, 2, new int[] {100, 101}, 0, false, 8, 4, CREDENTIALS));
        server.applyControl();

        deliver(server, join(0, 0xE71, 0xBAD), 100);
        assertThat(transport.drain()).isEmpty();
        assertThat(server.counter(ServerCounter.DROP_BAD_CREDENTIAL)).isEqualTo(1);
        assertThat(ServerCounter.DROP_BAD_CREDENTIAL.typeId() % 100).isEqualTo(24);

        deliver(server, join(0, 0xA, CREDENTIALS[0]), 100);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::type).containsExactly(MessageType.JOIN_ACK);
        assertThat(server.counter(ServerCounter.JOINS)).isEqualTo(1);
    }
}
