package org.inagg.protocol;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.inagg.JobRejectedException;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.transport.DiscardTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.RejectReason;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Regression test of a fuzzing finding (docs/fuzzing.md, WorkerAgentFuzzTest): a worker took a JOIN_ACK or a REJECT
 * from any sender, so a stray or spoofed answer joined it with a window and lane count the switch does not have (its
 * all-reduce then stalled until the peer timeout) or failed it. Only the switch it sent the JOIN to may answer. A
 * REJECT UNSUPPORTED_COLLECTIVE from it (a node that does not carry the operation's collective) fails it at once.
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

    @Test
    void shouldFailAtOnceWhenItsSwitchRejectsACollectiveItDoesNotCarry()
    {
        agent.onStart();
        agent.doWork();
        deliver(joinAck(3, 8), SWITCH);
        final MemorySegment data = Arena.ofAuto().allocate(64 * Integer.BYTES);
        final AllReduceOperation op = new AllReduceOperation(data, data, false, InaggHeader.COLLECTIVE_REDUCE_SCATTER,
            InaggHeader.OP_MAX, 2, 32, new int[] {0, 1}, new int[] {0, -1});
        assertThat(agent.submit(op)).isTrue();
        agent.doWork();

        final byte[] reject = new byte[InaggHeader.LENGTH];
        final MemorySegment m = MemorySegment.ofArray(reject);
        InaggHeader.writeReject(m, 0, JOB, 0, RejectReason.UNSUPPORTED_COLLECTIVE, 0, 0);
        InaggHeader.setFlags(m, 0, InaggHeader.FLAG_RESULT
            | InaggHeader.collectiveFlags(InaggHeader.COLLECTIVE_REDUCE_SCATTER, InaggHeader.OP_MAX));
        deliver(reject, STRANGER);
        assertThat(op.completion()).as("a stranger's REJECT is ignored").isNotDone();
        deliver(reject, SWITCH);
        assertThat(op.completion()).isCompletedExceptionally();
        assertThatThrownBy(op.completion()::join).hasCauseInstanceOf(JobRejectedException.class)
            .hasMessageContaining("job 1 worker 0: collective REDUCE_SCATTER (op MAX) is not supported by the node at")
            .hasMessageContaining(" at packet 0 of 8 of this reduce-scatter (docs/wire-format.md");
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
