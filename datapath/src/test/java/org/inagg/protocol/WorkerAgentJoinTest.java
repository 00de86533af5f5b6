package org.inagg.protocol;

import java.lang.foreign.MemorySegment;

import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.transport.DiscardTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.RejectReason;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression test of a fuzzing finding (docs/fuzzing.md, WorkerAgentFuzzTest): a worker took a JOIN_ACK or a REJECT
 * from any sender, so a stray or spoofed answer joined it with a window and lane count the switch does not have (its
 * all-reduce then stalled until the peer timeout) or failed it. Only the switch it sent the JOIN to may answer.
 */
class WorkerAgentJoinTest
{
    private static final int JOB = 1;
    private static final int SWITCH = 0;
    private static final int STRANGER = 5;

    private final WorkerAgent agent = new WorkerAgent(
        new WorkerSettings(JOB, 0, 2, SWITCH, 0, 1_000_000L, 1_000_000_000L, 1_000_000L, 16),
        new DiscardTransport(2048), FixedPointConverter.best(), () -> 0L, new CounterRegistry(64), 4);

    @Test
    void shouldTakeTheJoinAnswerOnlyFromTheSwitchItJoined()
    {
        agent.onStart();
        agent.doWork();

        deliver(joinAck(1, 4), STRANGER);
        deliver(reject(), STRANGER);
        assertThat(agent.joined()).as("answers from a stranger are ignored").isNotDone();

        deliver(joinAck(3, 8), SWITCH);
        assertThat(agent.joined()).isCompleted();
        assertThat(agent.slots()).isEqualTo(3);
        assertThat(agent.elementsPerPacket()).isEqualTo(8);
    }

    private void deliver(final byte[] message, final int peer)
    {
        agent.onMessage(MemorySegment.ofArray(message), 0, message.length, peer);
    }

    private static byte[] joinAck(final int slots, final int lanes)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoinAck(MemorySegment.ofArray(bytes), 0, JOB, 0, slots, 2, lanes);
        return bytes;
    }

    private static byte[] reject()
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.writeReject(MemorySegment.ofArray(bytes), 0, JOB, 0, RejectReason.UNKNOWN_JOB);
        return bytes;
    }
}
