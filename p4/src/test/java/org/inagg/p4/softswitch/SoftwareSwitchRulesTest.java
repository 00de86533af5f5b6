package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The switch's slot rules, packet by packet: worker i is transport peer 100 + i. */
class SoftwareSwitchRulesTest
{
    private static final int JOB = 9;
    private static final int WORKERS = 3;
    private static final int LANES = 4;

    private final CaptureTransport transport = new CaptureTransport();
    private SoftwareSwitch sw;

    @BeforeEach
    void setUp()
    {
        sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, WORKERS, 2, LANES));
        sw.doWork();
        for (int w = 0; w < WORKERS; w++)
        {
            deliver(join(w, WORKERS), 100 + w);
            final MemorySegment ack = transport.sent.get(w).segment();
            assertThat(InaggHeader.type(ack, 0)).isEqualTo(MessageType.JOIN_ACK);
            assertThat(InaggHeader.sequence(ack, 0)).isEqualTo(WORKERS);
            assertThat(InaggHeader.slotIndex(ack, 0)).isEqualTo(2);
            assertThat(InaggHeader.joinLanes(ack, 0)).isEqualTo(LANES);
        }
        transport.sent.clear();
    }

    @Test
    void shouldMulticastTheSumOnceAllWorkersContributedAndNotBefore()
    {
        deliver(aggregate(0, 1, 0, 10, 5, 1, 2, 3, 4), 100);
        deliver(aggregate(1, 1, 0, 10, -2, 10, 20, 30, 40), 101);
        assertThat(transport.sent).isEmpty();
        deliver(aggregate(2, 1, 0, 10, 7, 100, 200, 300, 400), 102);

        assertThat(transport.sent).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        for (int w = 0; w < WORKERS; w++)
        {
            final MemorySegment result = transport.sent.get(w).segment();
            assertThat(InaggHeader.flags(result, 0) & InaggHeader.FLAG_RESULT).isNotZero();
            assertThat(InaggHeader.workerId(result, 0)).as("worker id rewritten per copy").isEqualTo(w);
            assertThat(InaggHeader.sequence(result, 0)).isEqualTo(10);
            assertThat(InaggHeader.nextExponent(result, 0)).as("max of next exponents").isEqualTo(7);
            assertThat(lanes(result)).containsExactly(111, 222, 333, 444);
        }
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isEqualTo(3);
    }

    @Test
    void shouldDropDuplicatesOfAnOpenRoundWithoutAddingThemAgain()
    {
        deliver(aggregate(0, 0, 0, 4, 0, 1, 1, 1, 1), 100);
        deliver(aggregate(0, 0, 0, 4, 0, 1, 1, 1, 1), 100);
        deliver(aggregate(1, 0, 0, 4, 0, 1, 1, 1, 1), 101);
        deliver(aggregate(2, 0, 0, 4, 0, 1, 1, 1, 1), 102);
        assertThat(sw.counter(SwitchCounter.DUPLICATES)).isEqualTo(1);
        assertThat(lanes(transport.sent.get(0).segment())).containsExactly(3, 3, 3, 3);
    }

    @Test
    void shouldAnswerARetransmissionOfACompleteRoundToThatWorkerOnly()
    {
        completeRound(0, 0, 20, 1);
        transport.sent.clear();
        deliver(aggregate(1, 0, 0, 20, 0, 1, 1, 1, 1), 101);
        assertThat(transport.sent).hasSize(1);
        assertThat(transport.sent.get(0).peer()).isEqualTo(101);
        assertThat(lanes(transport.sent.get(0).segment())).containsExactly(3, 3, 3, 3);
        assertThat(sw.counter(SwitchCounter.RETRANSMIT_REPLIES)).isEqualTo(1);
    }

    @Test
    void shouldReuseAShadowCopyForTheNextRoundWhileTheOtherStillAnswersRetransmissions()
    {
        completeRound(0, 0, 30, 1);           // slot 0 copy 0, sequence 30
        completeRound(0, 1, 32, 10);          // slot 0 copy 1, the next round
        transport.sent.clear();
        // Copy 0 starts round 34 while a straggler's retransmission of round 32 is answered from copy 1.
        deliver(aggregate(0, 0, 0, 34, 0, 5, 5, 5, 5), 100);
        deliver(aggregate(2, 0, 1, 32, 0, 10, 10, 10, 10), 102);
        assertThat(transport.sent).hasSize(1);
        assertThat(lanes(transport.sent.get(0).segment())).containsExactly(30, 30, 30, 30);
        deliver(aggregate(1, 0, 0, 34, 0, 5, 5, 5, 5), 101);
        deliver(aggregate(2, 0, 0, 34, 0, 5, 5, 5, 5), 102);
        assertThat(lanes(transport.sent.get(transport.sent.size() - 1).segment())).containsExactly(15, 15, 15, 15);
    }

    @Test
    void shouldNeverAddALateDuplicateToACompleteRoundEvenAfterTheWorkerMovedOn()
    {
        completeRound(0, 0, 40, 1);
        // Worker 0 moves on to the other copy (clearing its seen bit in copy 0) ...
        deliver(aggregate(0, 0, 1, 42, 0, 7, 7, 7, 7), 100);
        transport.sent.clear();
        // ... then a late duplicate of its round-40 packet arrives: answered, never added.
        deliver(aggregate(0, 0, 0, 40, 0, 1, 1, 1, 1), 100);
        assertThat(transport.sent).hasSize(1);
        assertThat(lanes(transport.sent.get(0).segment())).containsExactly(3, 3, 3, 3);
        // And a late duplicate of round 42 must not be added twice either.
        deliver(aggregate(0, 0, 1, 42, 0, 7, 7, 7, 7), 100);
        deliver(aggregate(1, 0, 1, 42, 0, 7, 7, 7, 7), 101);
        deliver(aggregate(2, 0, 1, 42, 0, 7, 7, 7, 7), 102);
        assertThat(lanes(transport.sent.get(transport.sent.size() - 1).segment())).containsExactly(21, 21, 21, 21);
    }

    @Test
    void shouldDropStaleRoundsAndNewerRoundsOnAnIncompleteCopy()
    {
        // Rounds of a slot alternate between its copies; that is what clears each worker's seen bit.
        completeRound(1, 0, 50, 1);
        completeRound(1, 1, 52, 2);
        completeRound(1, 0, 54, 3);
        deliver(aggregate(0, 1, 0, 50, 0, 9, 9, 9, 9), 100);
        assertThat(sw.counter(SwitchCounter.DROP_STALE)).isEqualTo(1);
        deliver(aggregate(0, 1, 1, 56, 0, 9, 9, 9, 9), 100);
        deliver(aggregate(1, 1, 1, 60, 0, 9, 9, 9, 9), 101);
        assertThat(sw.counter(SwitchCounter.DROP_VIOLATION)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.DUPLICATES)).isZero();
    }

    @Test
    void shouldDropAndCountUnknownJobsWorkersSlotsSizesAndForeignSources()
    {
        final MemorySegment unknownJob = aggregate(0, 0, 0, 1, 0, 1, 1, 1, 1);
        unknownJob.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
            InaggHeader.JOB_ID_OFFSET, (short)77);
        deliver(unknownJob, 100);
        deliver(aggregate(WORKERS, 0, 0, 1, 0, 1, 1, 1, 1), 100);
        deliver(aggregate(0, 2, 0, 1, 0, 1, 1, 1, 1), 100);
        deliver(aggregate(0, 0, 0, 1, 0, 1, 1, 1, 1, 1), 100);
        deliver(aggregate(1, 0, 0, 1, 0, 1, 1, 1, 1), 100);
        final MemorySegment truncated = aggregate(0, 0, 0, 1, 0, 1, 1, 1, 1);
        sw.onMessage(truncated, 0, (int)truncated.byteSize() - 1, 100);
        assertThat(sw.counter(SwitchCounter.DROP_UNKNOWN_JOB)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.DROP_UNKNOWN_WORKER)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.DROP_BAD_SLOT)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.DROP_BAD_SIZE)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.DROP_SOURCE_MISMATCH)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.DROP_MALFORMED)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isZero();
        assertThat(transport.sent).isEmpty();
    }

    @Test
    void shouldRejectJoinsOfUnknownJobsOutOfRangeWorkersAndWrongWorkerCounts()
    {
        final MemorySegment unknown = join(0, WORKERS);
        unknown.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
            InaggHeader.JOB_ID_OFFSET, (short)78);
        deliver(unknown, 200);
        deliver(join(WORKERS, WORKERS), 201);
        deliver(join(0, WORKERS + 1), 202);
        assertThat(transport.sent).extracting(s -> InaggHeader.status(s.segment(), 0)).containsExactly(
            RejectReason.UNKNOWN_JOB, RejectReason.WORKER_ID_OUT_OF_RANGE, RejectReason.WORKER_COUNT_MISMATCH);
        assertThat(transport.sent).extracting(s -> InaggHeader.type(s.segment(), 0)).containsOnly(MessageType.REJECT);
    }

    @Test
    void shouldAggregateTwoHundredFiftySixWorkers()
    {
        final int workers = 256;
        sw.addJob(new SwitchJobConfig(JOB + 1, workers, 1, LANES));
        sw.doWork();
        for (int w = 0; w < workers; w++)
        {
            final MemorySegment join = join(w, workers);
            join.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
                InaggHeader.JOB_ID_OFFSET, (short)(JOB + 1));
            deliver(join, 1000 + w);
        }
        transport.sent.clear();
        for (int w = 0; w < workers; w++)
        {
            final MemorySegment packet = aggregate(w, 0, 0, 1, 0, w, 1, -w, 2);
            packet.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
                InaggHeader.JOB_ID_OFFSET, (short)(JOB + 1));
            deliver(packet, 1000 + w);
        }
        assertThat(transport.sent).hasSize(workers);
        assertThat(lanes(transport.sent.get(255).segment())).containsExactly(255 * 256 / 2, 256, -255 * 256 / 2, 512);
    }

    // -------------------------------------------------------------------------------------------------------------

    private void completeRound(final int slot, final int copy, final int sequence, final int value)
    {
        for (int w = 0; w < WORKERS; w++)
        {
            deliver(aggregate(w, slot, copy, sequence, 0, value, value, value, value), 100 + w);
        }
    }

    private void deliver(final MemorySegment message, final int peer)
    {
        sw.onMessage(message, 0, (int)message.byteSize(), peer);
    }

    private static MemorySegment join(final int worker, final int workers)
    {
        final MemorySegment m = Arena.ofAuto().allocate(InaggHeader.LENGTH);
        InaggHeader.write(m, 0, MessageType.JOIN, 0, JOB, worker, 0, 0, workers, 0, 0, InaggHeader.NO_EXPONENT, 0);
        return m;
    }

    private static MemorySegment aggregate(
        final int worker, final int slot, final int copy, final int sequence, final int nextExponent,
        final int... lanes)
    {
        final MemorySegment m = Arena.ofAuto().allocate(InaggHeader.messageLength(lanes.length));
        InaggHeader.write(m, 0, MessageType.AGGREGATE, 0, JOB, worker, slot, copy, sequence, lanes.length, 0,
            nextExponent, 0);
        for (int i = 0; i < lanes.length; i++)
        {
            InaggHeader.setElement(m, 0, i, lanes[i]);
        }
        return m;
    }

    private static int[] lanes(final MemorySegment m)
    {
        final int[] values = new int[InaggHeader.elementCount(m, 0)];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = InaggHeader.element(m, 0, i);
        }
        return values;
    }
}
