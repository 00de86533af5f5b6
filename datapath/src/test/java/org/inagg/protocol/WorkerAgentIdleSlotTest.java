package org.inagg.protocol;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.transport.DiscardTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression test of a fuzzing finding (docs/fuzzing.md, WorkerAgentFuzzTest, after 3.7 million runs): a slot with no
 * packet outstanding is marked IDLE = -1, which is also the packet number of sequence streamBase - 1, so a stray result
 * of that sequence was taken by an idle slot: for a float tensor the worker threw ArrayIndexOutOfBoundsException
 * (agreedExponent[-1]) out of onMessage; for int32 it counted a packet complete and sent another slot's packet.
 */
class WorkerAgentIdleSlotTest
{
    private static final int JOB = 1;
    private static final int SWITCH = 0;

    /** Refuses every claim while full: the worker's packets stay queued and their slots idle. */
    private static final class FullTransport extends DiscardTransport
    {
        boolean full;

        FullTransport()
        {
            super(2048);
        }

        @Override
        public long claim(final int peer, final int length)
        {
            return full ? CLAIM_FAILED : super.claim(peer, length);
        }
    }

    @ParameterizedTest(name = "floats {0}")
    @ValueSource(booleans = {true, false})
    void shouldIgnoreAResultForAnIdleSlot(final boolean floats)
    {
        final FullTransport transport = new FullTransport();
        final WorkerAgent agent = new WorkerAgent(
            new WorkerSettings(JOB, 0, 2, SWITCH, 0, 1_000_000L, 1_000_000_000L, 1_000_000L, 16),
            transport, FixedPointConverter.best(), () -> 0L, new CounterRegistry(64), 4);
        agent.onStart();
        agent.doWork();
        final byte[] ack = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoinAck(MemorySegment.ofArray(ack), 0, JOB, 0, 4, 2, 8);
        agent.onMessage(MemorySegment.ofArray(ack), 0, ack.length, SWITCH);
        assertThat(agent.joined()).isCompleted();

        final MemorySegment tensor = Arena.ofAuto().allocate(41 * Float.BYTES);
        final AllReduceOperation op = new AllReduceOperation(tensor, tensor, 41, floats);
        assertThat(agent.submit(op)).isTrue();
        transport.full = true;
        agent.doWork();
        final long duplicates = agent.counter(WorkerCounter.DUPLICATE_RESULTS);

        // The fuzzer's message: a RESULT of job 1, slot 2, copy 0, sequence -1 (streamBase - 1), no lanes, next
        // exponent 64.
        final byte[] stray = new byte[InaggHeader.LENGTH];
        InaggHeader.write(MemorySegment.ofArray(stray), 0, MessageType.AGGREGATE, InaggHeader.FLAG_RESULT, JOB, 0xFFFF,
            2, 0, -1, 0, 0, 64, 0);
        agent.onMessage(MemorySegment.ofArray(stray), 0, stray.length, 7);

        assertThat(agent.counter(WorkerCounter.DUPLICATE_RESULTS)).as("ignored").isEqualTo(duplicates + 1);
        transport.full = false;
        agent.doWork();
        assertThat(agent.counter(WorkerCounter.PACKETS_SENT)).as("each active slot sends its first packet")
            .isEqualTo(4);
        assertThat(op.completion()).isNotDone();
    }
}
