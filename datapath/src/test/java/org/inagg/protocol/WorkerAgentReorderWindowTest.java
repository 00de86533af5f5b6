package org.inagg.protocol;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.transport.DiscardTransport;
import org.inagg.transport.MessageHandler;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lost result is recovered within a reorder window of the measured round trip once results of later packets come
 * back (RACK, RFC 8985), not after the retransmission timeout, which outwaits the job's slowest worker and is at least
 * the configured one: on a lossy path that timeout stalled a slot for several round trips per loss. Without loss, no
 * packet is resent. The switch is played by the test (one worker, int32, so a result is the packet echoed), and the
 * clock is the test's.
 */
class WorkerAgentReorderWindowTest
{
    private static final int JOB = 1;
    private static final int SWITCH = 0;
    private static final int SLOTS = 16;
    private static final int LANES = 8;
    private static final int ELEMENTS = SLOTS * LANES * 8; // 8 rounds per slot
    private static final long RTT_NS = TimeUnit.MICROSECONDS.toNanos(100);
    private static final long TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(20);

    /** Keeps a copy of every message the worker sends; hands it the test's answers when it polls. */
    private static final class RecordingTransport extends DiscardTransport
    {
        final List<byte[]> sent = new ArrayList<>();
        final List<MemorySegment> inbox = new ArrayList<>();

        @Override
        public int poll(final MessageHandler handler, final int limit)
        {
            int delivered = 0;
            while (delivered < limit && !inbox.isEmpty())
            {
                final MemorySegment answer = inbox.removeFirst();
                handler.onMessage(answer, 0, (int)answer.byteSize(), SWITCH);
                delivered++;
            }
            return delivered;
        }

        RecordingTransport()
        {
            super(InaggHeader.messageLength(LANES));
        }

        @Override
        public void commit()
        {
            super.commit();
            sent.add(txMemory().asSlice(0, claimedLength()).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    private long now;

    @Test
    void shouldResendALostResultWithinTheReorderWindowWhileLaterResultsArrive()
    {
        final Run run = run(0);
        assertThat(run.retransmissions).as("packet 0's result was dropped once: one retransmission").isEqualTo(1);
        assertThat(run.resendAtNs).as("resent within a few round trips, long before the %d ms timeout",
            TimeUnit.NANOSECONDS.toMillis(TIMEOUT_NS)).isLessThan(10 * RTT_NS);
        assertThat(run.completed).isTrue();
    }

    @Test
    void shouldResendNothingWithoutLoss()
    {
        final Run run = run(-1);
        assertThat(run.retransmissions).isZero();
        assertThat(run.completed).isTrue();
    }

    private record Run(long retransmissions, long resendAtNs, boolean completed)
    {
    }

    /** One all-reduce answered one round trip after each send; the first result of {@code dropSequence} is lost. */
    private Run run(final int dropSequence)
    {
        final RecordingTransport transport = new RecordingTransport();
        final WorkerAgent agent = new WorkerAgent(
            new WorkerSettings(JOB, 0, 1, SWITCH, 0, TIMEOUT_NS, TimeUnit.SECONDS.toNanos(30), 1_000_000L, 16),
            transport, FixedPointConverter.best(), () -> now, new CounterRegistry(64), 4);
        agent.onStart();
        agent.doWork();
        final MemorySegment ack = Arena.ofAuto().allocate(InaggHeader.LENGTH);
        InaggHeader.writeJoinAck(ack, 0, JOB, 0, SLOTS, 1, LANES);
        agent.onMessage(ack, 0, (int)ack.byteSize(), SWITCH);
        assertThat(agent.joined()).isCompleted();

        final MemorySegment tensor = Arena.ofAuto().allocate((long)ELEMENTS * Integer.BYTES);
        final MemorySegment result = Arena.ofAuto().allocate((long)ELEMENTS * Integer.BYTES);
        for (int i = 0; i < ELEMENTS; i++)
        {
            tensor.setAtIndex(ValueLayout.JAVA_INT, i, 3 * i + 1);
        }
        final AllReduceOperation op = new AllReduceOperation(tensor, result, ELEMENTS, false);
        assertThat(agent.submit(op)).isTrue();
        transport.sent.clear();
        agent.doWork();

        boolean dropped = false;
        long resendAt = -1;
        final long start = now;
        for (int step = 0; step < 2_000 && !op.completion().isDone(); step++)
        {
            final List<byte[]> inFlight = new ArrayList<>(transport.sent);
            transport.sent.clear();
            now += RTT_NS;
            for (final byte[] packet : inFlight)
            {
                final MemorySegment m = MemorySegment.ofArray(packet);
                if ((InaggHeader.flags(m, 0) & InaggHeader.FLAG_RETRANSMIT) != 0 && resendAt < 0)
                {
                    resendAt = now - RTT_NS - start;
                }
                if (!dropped && InaggHeader.sequence(m, 0) == dropSequence)
                {
                    dropped = true;
                    continue;
                }
                final MemorySegment answer = Arena.ofAuto().allocate(packet.length);
                InaggHeader.write(answer, 0, MessageType.AGGREGATE, InaggHeader.FLAG_RESULT | InaggHeader.FLAG_INT32,
                    JOB, 0, InaggHeader.slotIndex(m, 0), InaggHeader.shadowCopy(m, 0), InaggHeader.sequence(m, 0),
                    InaggHeader.elementCount(m, 0), 0, InaggHeader.NO_EXPONENT, 0);
                MemorySegment.copy(m, InaggHeader.PAYLOAD_OFFSET, answer, InaggHeader.PAYLOAD_OFFSET,
                    packet.length - InaggHeader.PAYLOAD_OFFSET);
                transport.inbox.add(answer);
            }
            while (!transport.inbox.isEmpty())
            {
                agent.doWork();
            }
            agent.doWork();
        }
        final boolean completed = op.completion().isDone() && !op.completion().isCompletedExceptionally();
        if (completed)
        {
            for (int i = 0; i < ELEMENTS; i++)
            {
                assertThat(result.getAtIndex(ValueLayout.JAVA_INT, i)).as("element %d", i).isEqualTo(3 * i + 1);
            }
        }
        return new Run(agent.counter(WorkerCounter.RETRANSMISSIONS), resendAt, completed);
    }
}
