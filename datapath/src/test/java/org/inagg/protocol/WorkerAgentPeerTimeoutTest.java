package org.inagg.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.PeerTimeoutException;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.transport.DiscardTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker whose thread did not run between a quarter of the peer timeout and all of it (a cold JVM's first operation
 * on a loaded host, a paused process) asks the switch whether it is there before it fails, so the failure names the
 * right party: it blamed the switch, never having probed it (EndToEndAllReduceTest failed so under load). The switch
 * is played by the test, and the clock is the test's.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class WorkerAgentPeerTimeoutTest
{
    private static final int JOB = 1;
    private static final int SWITCH = 0;
    private static final int LANES = 8;
    private static final int SESSION = 2;
    private static final long PEER_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(500);

    /** Keeps the type of every message the worker sends. */
    private static final class TypeRecordingTransport extends DiscardTransport
    {
        final List<Integer> types = new ArrayList<>();

        TypeRecordingTransport()
        {
            super(InaggHeader.messageLength(LANES));
        }

        @Override
        public void commit()
        {
            super.commit();
            types.add(InaggHeader.type(txMemory(), 0));
        }
    }

    private final TypeRecordingTransport transport = new TypeRecordingTransport();
    private long now;
    private final WorkerAgent agent = new WorkerAgent(
        new WorkerSettings(JOB, 0, 2, SWITCH, 0, TimeUnit.MILLISECONDS.toNanos(2), PEER_TIMEOUT_NS, 1_000_000L, 16),
        transport, FixedPointConverter.best(), () -> now, new CounterRegistry(64), 4);

    @Test
    void shouldProbeAStallItSleptThroughAndBlameTheGonePeerWhenTheSwitchAnswers()
    {
        final AllReduceOperation op = startStalledOperation();
        now += PEER_TIMEOUT_NS + 1; // the thread slept through the whole window for probes
        agent.doWork();
        assertThat(op.completion()).as("no verdict before the switch was asked").isNotDone();
        assertThat(transport.types).as("a liveness probe went out").contains(MessageType.JOIN);

        now += TimeUnit.MILLISECONDS.toNanos(1);
        deliver(joinAck());
        now += PEER_TIMEOUT_NS / 8;
        agent.doWork();
        assertThat(op.completion()).isCompletedExceptionally();
        assertThat(failure(op)).isInstanceOf(PeerTimeoutException.class).hasMessageContaining("a peer worker is gone");
    }

    @Test
    void shouldBlameTheSwitchWhenItsProbeGoesUnanswered()
    {
        final AllReduceOperation op = startStalledOperation();
        now += PEER_TIMEOUT_NS + 1;
        agent.doWork();
        now += PEER_TIMEOUT_NS / 8 - 1;
        agent.doWork();
        assertThat(op.completion()).as("the probe's answer is given a probe interval").isNotDone();
        now += 1;
        agent.doWork();
        assertThat(failure(op)).isInstanceOf(PeerTimeoutException.class).hasMessageContaining("the switch is gone");
    }

    @Test
    void shouldFailAtThePeerTimeoutWhenTheStallWasProbedOnTime()
    {
        final AllReduceOperation op = startStalledOperation();
        for (int step = 0; step < 10; step++)
        {
            now += PEER_TIMEOUT_NS / 10;
            agent.doWork();
            if (transport.types.contains(MessageType.JOIN) && step < 9)
            {
                deliver(joinAck());
            }
        }
        now += 1;
        agent.doWork();
        assertThat(failure(op)).isInstanceOf(PeerTimeoutException.class).hasMessageContaining("a peer worker is gone");
    }

    @Test
    void shouldProbeAndFailOnAClockThatReadsNegative()
    {
        now = -TimeUnit.DAYS.toNanos(1); // System.nanoTime may read negative
        final AllReduceOperation op = startStalledOperation();
        now += PEER_TIMEOUT_NS / 2;
        agent.doWork();
        assertThat(transport.types).as("a liveness probe went out").contains(MessageType.JOIN);
        now += PEER_TIMEOUT_NS / 2 + 1;
        agent.doWork();
        assertThat(failure(op)).isInstanceOf(PeerTimeoutException.class).hasMessageContaining("the switch is gone");
    }

    /** Joined, one operation submitted and its packets sent, then nothing more: the other worker is gone. */
    private AllReduceOperation startStalledOperation()
    {
        agent.onStart();
        agent.doWork();
        deliver(joinAck());
        assertThat(agent.joined()).isCompleted();
        final int elements = 4 * LANES;
        final MemorySegment tensor = MemorySegment.ofArray(new int[elements]);
        tensor.setAtIndex(ValueLayout.JAVA_INT, 0, 1);
        final AllReduceOperation op = new AllReduceOperation(tensor, MemorySegment.ofArray(new int[elements]),
            elements, false);
        assertThat(agent.submit(op)).isTrue();
        agent.doWork();
        assertThat(transport.types).contains(MessageType.AGGREGATE);
        transport.types.clear();
        return op;
    }

    private void deliver(final byte[] message)
    {
        agent.onMessage(MemorySegment.ofArray(message), 0, message.length, SWITCH);
    }

    private static byte[] joinAck()
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoinAck(MemorySegment.ofArray(bytes), 0, JOB, 0, 4, SESSION, LANES);
        return bytes;
    }

    private static Throwable failure(final AllReduceOperation op)
    {
        assertThat(op.completion()).isCompletedExceptionally();
        return op.completion().handle((ok, e) -> e instanceof java.util.concurrent.CompletionException ? e.getCause()
            : e).join();
    }
}
