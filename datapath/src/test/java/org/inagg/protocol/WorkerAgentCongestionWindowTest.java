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
 * The congestion window (AIMD): a loss halves the packets a worker sends per round trip, results grow it back, and the
 * oldest packet is sent whatever the window. The switch is played by the test (one worker, int32, so a result is the
 * packet echoed one round trip after it was sent), and the clock is the test's.
 */
class WorkerAgentCongestionWindowTest
{
    private static final int JOB = 1;
    private static final int SWITCH = 0;
    private static final int SLOTS = 16;
    private static final int LANES = 8;
    private static final int ELEMENTS = SLOTS * LANES * 16; // 16 rounds per slot
    private static final long RTT_NS = TimeUnit.MICROSECONDS.toNanos(100);
    private static final long TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(20);

    /** Keeps a copy of every message the worker sends; hands it the test's answers when it polls. */
    private static final class RecordingTransport extends DiscardTransport
    {
        final List<byte[]> sent = new ArrayList<>();
        final List<MemorySegment> inbox = new ArrayList<>();

        RecordingTransport()
        {
            super(InaggHeader.messageLength(LANES));
        }

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

        @Override
        public void commit()
        {
            super.commit();
            sent.add(txMemory().asSlice(0, claimedLength()).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    private long now;

    @Test
    void shouldHalveThePacketsSentPerRoundTripOnALossAndGrowThemBack()
    {
        final Run run = run(SLOTS * 3);
        System.out.println("new packets per round trip, loss resent at step " + run.firstRetransmissionStep + ": "
            + run.newPerStep);
        final int lossStep = run.firstRetransmissionStep;
        assertThat(lossStep).as("the lost result is detected and resent").isPositive();
        assertThat(run.newPerStep.subList(0, 3)).as("a full window per round trip before the loss: %s",
            run.newPerStep).containsOnly(SLOTS);
        // after the cut: half the window, plus its additive growth and the oldest packet sent past it
        assertThat(run.newPerStep.get(lossStep + 1)).as("new packets in the round trip after the cut: %s",
            run.newPerStep).isBetween(SLOTS / 2 - 1, SLOTS / 2 + 2);
        int grownBackAt = -1;
        for (int step = lossStep + 2; step < run.newPerStep.size() && grownBackAt < 0; step++)
        {
            assertThat(run.newPerStep.get(step) - run.newPerStep.get(step - 1))
                .as("grown back by at most one packet per round trip: %s", run.newPerStep).isLessThanOrEqualTo(1);
            grownBackAt = run.newPerStep.get(step) == SLOTS ? step : -1;
        }
        assertThat(grownBackAt).as("grown back to the full window: %s", run.newPerStep).isPositive();
        assertThat(run.retransmissions).isEqualTo(1);
        assertThat(run.completed).isTrue();
    }

    @Test
    void shouldKeepTheFullWindowWithoutLoss()
    {
        final Run run = run(-1);
        assertThat(run.firstRetransmissionStep).isEqualTo(-1);
        assertThat(run.newPerStep.subList(0, run.newPerStep.size() - 1)).allMatch(n -> n == SLOTS);
        assertThat(run.completed).isTrue();
    }

    private record Run(List<Integer> newPerStep, int firstRetransmissionStep, long retransmissions, boolean completed)
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
            tensor.setAtIndex(ValueLayout.JAVA_INT, i, 5 * i - 7);
        }
        final AllReduceOperation op = new AllReduceOperation(tensor, result, ELEMENTS, false);
        assertThat(agent.submit(op)).isTrue();
        transport.sent.clear();
        agent.doWork();

        final List<Integer> newPerStep = new ArrayList<>();
        boolean dropped = false;
        int firstRetransmissionStep = -1;
        for (int step = 0; step < 2_000 && !op.completion().isDone(); step++)
        {
            final List<byte[]> inFlight = new ArrayList<>(transport.sent);
            transport.sent.clear();
            now += RTT_NS;
            int fresh = 0;
            for (final byte[] packet : inFlight)
            {
                final MemorySegment m = MemorySegment.ofArray(packet);
                if ((InaggHeader.flags(m, 0) & InaggHeader.FLAG_RETRANSMIT) == 0)
                {
                    fresh++;
                }
                else if (firstRetransmissionStep < 0)
                {
                    firstRetransmissionStep = step;
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
            newPerStep.add(fresh);
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
                assertThat(result.getAtIndex(ValueLayout.JAVA_INT, i)).as("element %d", i).isEqualTo(5 * i - 7);
            }
        }
        return new Run(newPerStep, firstRetransmissionStep, agent.counter(WorkerCounter.RETRANSMISSIONS), completed);
    }
}
