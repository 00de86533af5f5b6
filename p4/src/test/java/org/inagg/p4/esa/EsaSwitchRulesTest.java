package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;
import java.util.List;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.p4.testing.CaptureTransport.aggregate;
import static org.inagg.p4.testing.CaptureTransport.deliver;

/**
 * The ESA switch's rules packet by packet, on a pool of ONE aggregator so that every block collides: job 1 has workers
 * 100..102 and server 50, job 2 has workers 200..201 and server 60. Priorities come from the header.
 */
class EsaSwitchRulesTest
{
    private static final int A = 1;
    private static final int B = 2;
    private static final int SERVER_A = 50;
    private static final int SERVER_B = 60;

    private final CaptureTransport transport = new CaptureTransport();
    private EsaSwitch sw;

    private void start(final AllocationMode mode)
    {
        sw = new EsaSwitch(transport, new CounterRegistry(64),
            new EsaSwitchSettings(1, 4, 4, mode, PriorityPolicy.HEADER, 16));
        sw.addJob(new EsaJobConfig(A, 3, 4, 8, 0, new int[] {100, 101, 102}, SERVER_A, 1 << 20));
        sw.addJob(new EsaJobConfig(B, 2, 4, 8, 0, new int[] {200, 201}, SERVER_B, 1 << 20));
        sw.applyControl();
    }

    private void send(final int job, final int worker, final int sequence, final int priority, final int flags,
        final int... lanes)
    {
        deliver(sw, aggregate(job, worker, sequence, priority, flags, lanes), (job == A ? 100 : 200) + worker);
    }

    @Test
    void shouldMulticastCopyToTheServerAndFreeTheAggregatorOnCompletion()
    {
        start(AllocationMode.PREEMPTIVE);
        send(B, 0, 5, 1, 0, 1, 2, 3, 4);
        assertThat(transport.sent).isEmpty();
        send(B, 1, 5, 1, 0, 10, 20, 30, 40);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(200, 201, SERVER_B);
        for (int w = 0; w < 2; w++)
        {
            assertThat(out.get(w).type()).isEqualTo(MessageType.AGGREGATE);
            assertThat(InaggHeader.flags(out.get(w).segment(), 0) & InaggHeader.FLAG_RESULT).isNotZero();
            assertThat(InaggHeader.workerId(out.get(w).segment(), 0)).isEqualTo(w);
            assertThat(InaggHeader.sequence(out.get(w).segment(), 0)).isEqualTo(5);
            assertThat(out.get(w).lanes()).containsExactly(11, 22, 33, 44);
        }
        assertThat(out.get(2).type()).isEqualTo(EsaWire.TYPE_PARTIAL);
        assertThat(out.get(2).status()).isEqualTo(EsaWire.REASON_COMPLETE);
        assertThat(CaptureTransport.partialLanes(out.get(2))).containsExactly(11, 22, 33, 44);
        assertThat(EsaWire.partialBitmapWord(out.get(2).segment(), 0, 0)).isEqualTo(0b11);

        // Freed at once: a block of the other job, at the lowest priority, takes the aggregator.
        send(A, 0, 9, 0, 0, 1, 1, 1, 1);
        assertThat(transport.sent).isEmpty();
        assertThat(sw.counter(EsaCounter.ALLOCATIONS)).isEqualTo(2);
    }

    /** An evicted block's PARTIAL carries its own job's session, not that of the other job's packet that took it. */
    @Test
    void shouldSendAnEvictedBlockInItsHolderJobsSession()
    {
        start(AllocationMode.PREEMPTIVE);
        deliver(sw, join(1L), 100);
        deliver(sw, join(2L), 100);
        assertThat(sw.session(A)).as("worker 0 of job 1 restarted").isEqualTo(1);
        transport.sent.clear();
        deliver(sw, CaptureTransport.aggregateOfSession(A, 1, 0, 10, 0, 1, 1, 1, 1), 100);
        deliver(sw, CaptureTransport.aggregateOfSession(A, 1, 2, 10, 0, 2, 2, 2, 2), 102);
        send(B, 0, 5, 7, 0, 100, 100, 100, 100);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(SERVER_A);
        final CaptureTransport.Sent partial = out.get(0);
        assertThat(partial.status()).isEqualTo(EsaWire.REASON_PREEMPTED);
        assertThat(InaggHeader.session(partial.segment(), 0)).as("job 1's session").isEqualTo(1);
        assertThat(EsaWire.partialBitmapWords(partial.segment(), 0)).isEqualTo(1);
        assertThat(EsaWire.partialBitmapWord(partial.segment(), 0, 0)).isEqualTo(0b101);
        assertThat(CaptureTransport.partialLanes(partial)).containsExactly(3, 3, 3, 3);

        // Job 2's own block completes in job 2's session.
        send(B, 1, 5, 7, 0, 1, 1, 1, 1);
        final CaptureTransport.Sent complete = transport.drain().getLast();
        assertThat(complete.peer()).isEqualTo(SERVER_B);
        assertThat(complete.status()).isEqualTo(EsaWire.REASON_COMPLETE);
        assertThat(InaggHeader.session(complete.segment(), 0)).isZero();
    }

    /** A JOIN of job 1's worker 0 by process {@code incarnation}: another one than before starts the next session. */
    private static byte[] join(final long incarnation)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoin(MemorySegment.ofArray(bytes), 0, A, 0, 3, InaggHeader.ANY_SESSION, incarnation);
        return bytes;
    }

    @Test
    void shouldPreemptALowerPriorityPartialAndSendItWithItsBitmapToTheServer()
    {
        start(AllocationMode.PREEMPTIVE);
        send(A, 0, 10, 1, 0, 1, 1, 1, 1);
        send(A, 2, 10, 1, 0, 2, 2, 2, 2);
        send(B, 0, 5, 7, 0, 100, 100, 100, 100);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).hasSize(1);
        final CaptureTransport.Sent partial = out.get(0);
        assertThat(partial.peer()).isEqualTo(SERVER_A);
        assertThat(partial.type()).isEqualTo(EsaWire.TYPE_PARTIAL);
        assertThat(partial.status()).isEqualTo(EsaWire.REASON_PREEMPTED);
        assertThat(InaggHeader.jobId(partial.segment(), 0)).isEqualTo(A);
        assertThat(InaggHeader.sequence(partial.segment(), 0)).isEqualTo(10);
        assertThat(InaggHeader.priority(partial.segment(), 0)).as("holder's priority").isEqualTo(1);
        assertThat(InaggHeader.session(partial.segment(), 0)).isZero();
        assertThat(CaptureTransport.partialLanes(partial)).containsExactly(3, 3, 3, 3);
        assertThat(EsaWire.partialBitmapWords(partial.segment(), 0)).isEqualTo(1);
        assertThat(EsaWire.partialBitmapWord(partial.segment(), 0, 0)).isEqualTo(0b101);

        // The preempted block's straggler follows its partial to the server (tombstone), not into the aggregator.
        send(A, 1, 10, 1, 0, 4, 4, 4, 4);
        assertThat(transport.sent).hasSize(1);
        assertThat(transport.sent.get(0).peer()).isEqualTo(SERVER_A);
        assertThat(transport.sent.get(0).type()).isEqualTo(MessageType.AGGREGATE);
        assertThat(transport.sent.get(0).status()).isEqualTo(EsaWire.REASON_TOMBSTONE);
        assertThat(transport.sent.get(0).lanes()).containsExactly(4, 4, 4, 4);
        transport.drain();

        // The preemptor completes in the switch with only its own contributions.
        send(B, 1, 5, 7, 0, 1, 1, 1, 1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::peer).containsExactly(200, 201, SERVER_B);
        assertThat(sw.counter(EsaCounter.PREEMPTIONS)).isEqualTo(1);
    }

    @Test
    void shouldSendAPacketThatCannotPreemptToTheServerAsItCame()
    {
        start(AllocationMode.PREEMPTIVE);
        send(A, 0, 10, 5, 0, 1, 1, 1, 1);
        send(B, 0, 5, 5, 0, 7, 8, 9, 10);       // equal priority: no preemption
        send(B, 1, 5, 9, 0, 1, 1, 1, 1);        // same block, diverted before: follows it even at a higher priority

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(SERVER_B, SERVER_B);
        assertThat(out.get(0).type()).isEqualTo(MessageType.AGGREGATE);
        assertThat(out.get(0).status()).isEqualTo(EsaWire.REASON_COLLISION);
        assertThat(out.get(0).lanes()).containsExactly(7, 8, 9, 10);
        assertThat(InaggHeader.workerId(out.get(0).segment(), 0)).isZero();
        assertThat(out.get(1).status()).isEqualTo(EsaWire.REASON_TOMBSTONE);
        // The holder was not disturbed: it completes in the switch.
        send(A, 1, 10, 5, 0, 1, 1, 1, 1);
        send(A, 2, 10, 5, 0, 1, 1, 1, 1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::peer)
            .containsExactly(100, 101, 102, SERVER_A);
    }

    @Test
    void shouldFollowThePreemptionRule()
    {
        final AllocationMode esa = AllocationMode.PREEMPTIVE;
        assertThat(EsaSwitch.preempts(esa, A, 0, 5, B, 0, 4)).isTrue();
        assertThat(EsaSwitch.preempts(esa, A, 0, 5, B, 0, 5)).as("equal").isFalse();
        assertThat(EsaSwitch.preempts(esa, A, 0, 4, B, 0, 5)).as("lower").isFalse();
        assertThat(EsaSwitch.preempts(AllocationMode.DEALLOCATE_ON_ACK, A, 0, 9, B, 0, 0)).as("ATP").isFalse();
        assertThat(EsaSwitch.preempts(esa, A, 11, 0, A, 10, 9)).as("newer block, same job").isTrue();
        assertThat(EsaSwitch.preempts(esa, A, 9, 9, A, 10, 0)).as("older block, same job").isFalse();
        assertThat(EsaSwitch.preempts(esa, A, Integer.MIN_VALUE, 0, A, Integer.MAX_VALUE, 0))
            .as("serial-number order across the wrap").isTrue();
    }

    @Test
    void shouldDropADuplicateContributionWithoutAddingIt()
    {
        start(AllocationMode.PREEMPTIVE);
        send(B, 0, 5, 1, 0, 1, 1, 1, 1);
        send(B, 0, 5, 1, 0, 1, 1, 1, 1);
        send(B, 1, 5, 1, 0, 1, 1, 1, 1);
        assertThat(transport.sent.get(0).lanes()).containsExactly(2, 2, 2, 2);
        assertThat(sw.counter(EsaCounter.DUPLICATES)).isEqualTo(1);
    }

    @Test
    void shouldFlushAPartialOnARetransmissionAndNeverAllocateForOne()
    {
        start(AllocationMode.PREEMPTIVE);
        send(A, 0, 10, 1, 0, 1, 1, 1, 1);
        send(A, 1, 10, 1, 0, 2, 2, 2, 2);
        send(A, 0, 10, 1, InaggHeader.FLAG_RETRANSMIT, 1, 1, 1, 1);

        List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(SERVER_A, SERVER_A);
        assertThat(out.get(0).status()).isEqualTo(EsaWire.REASON_FLUSHED);
        assertThat(EsaWire.partialBitmapWord(out.get(0).segment(), 0, 0)).isEqualTo(0b11);
        assertThat(CaptureTransport.partialLanes(out.get(0))).containsExactly(3, 3, 3, 3);
        assertThat(out.get(1).status()).isEqualTo(EsaWire.REASON_RETRANSMIT);

        // The aggregator is free; a retransmission does not take it, a fresh block does.
        send(A, 2, 12, 1, InaggHeader.FLAG_RETRANSMIT, 5, 5, 5, 5);
        out = transport.drain();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).status()).isEqualTo(EsaWire.REASON_RETRANSMIT);
        send(B, 0, 5, 0, 0, 1, 1, 1, 1);
        send(B, 1, 5, 0, 0, 1, 1, 1, 1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::peer).containsExactly(200, 201, SERVER_B);
    }

    @Test
    void shouldLetANewerBlockOfTheSameJobEvictAnOlderOneButNotTheReverse()
    {
        start(AllocationMode.PREEMPTIVE);
        send(A, 0, 10, 1, 0, 1, 1, 1, 1);
        send(A, 0, 11, 1, 0, 2, 2, 2, 2);
        List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).status()).isEqualTo(EsaWire.REASON_STALE);
        assertThat(InaggHeader.sequence(out.get(0).segment(), 0)).isEqualTo(10);

        send(A, 1, 9, 1, 0, 3, 3, 3, 3);
        out = transport.drain();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).status()).isEqualTo(EsaWire.REASON_COLLISION);
    }

    @Test
    void shouldHoldTheAggregatorUntilTheServerAcknowledgesUnderAtp()
    {
        start(AllocationMode.DEALLOCATE_ON_ACK);
        send(B, 0, 5, 1, 0, 1, 2, 3, 4);
        send(B, 1, 5, 1, 0, 1, 2, 3, 4);
        List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).as("the sum goes to the server only")
            .containsExactly(SERVER_B);
        assertThat(out.get(0).status()).isEqualTo(EsaWire.REASON_COMPLETE);

        send(A, 0, 10, 9, 0, 1, 1, 1, 1);
        out = transport.drain();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).status()).as("no preemption under ATP").isEqualTo(EsaWire.REASON_COLLISION);

        // The server's result from anyone but the server is ignored; from the server it frees and is multicast.
        final byte[] result = aggregate(B, 0, 5, 0, InaggHeader.FLAG_RESULT, 2, 4, 6, 8);
        deliver(sw, result, 999);
        assertThat(transport.sent).isEmpty();
        deliver(sw, result, SERVER_B);
        out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(200, 201);
        assertThat(InaggHeader.workerId(out.get(1).segment(), 0)).isEqualTo(1);
        assertThat(out.get(1).lanes()).containsExactly(2, 4, 6, 8);

        send(A, 0, 11, 0, 0, 1, 1, 1, 1);
        send(A, 1, 11, 0, 0, 1, 1, 1, 1);
        send(A, 2, 11, 0, 0, 1, 1, 1, 1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::peer).containsExactly(SERVER_A);
        assertThat(sw.counter(EsaCounter.ACKS)).isEqualTo(1);
    }

    @Test
    void shouldAnswerJoinsWithTheJobsWindowAndRejectStrangers()
    {
        start(AllocationMode.PREEMPTIVE);
        final byte[] join = new byte[InaggHeader.LENGTH];
        final var m = java.lang.foreign.MemorySegment.ofArray(join);
        InaggHeader.write(m, 0, MessageType.JOIN, 0, A, 2, 0, 0, 3, 0, 0, InaggHeader.NO_EXPONENT, 0);
        deliver(sw, join, 102);
        deliver(sw, join, 999);                 // not worker 2's registered source: no answer
        InaggHeader.write(m, 0, MessageType.JOIN, 0, 77, 0, 0, 0, 3, 0, 0, InaggHeader.NO_EXPONENT, 0);
        deliver(sw, join, 100);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(102, 100);
        final var ack = out.get(0).segment();
        assertThat(InaggHeader.type(ack, 0)).isEqualTo(MessageType.JOIN_ACK);
        assertThat(InaggHeader.sequence(ack, 0)).isEqualTo(3);
        assertThat(InaggHeader.slotIndex(ack, 0)).as("window").isEqualTo(8);
        assertThat(InaggHeader.joinLanes(ack, 0)).isEqualTo(4);
        assertThat(out.get(1).type()).isEqualTo(MessageType.REJECT);
        assertThat(out.get(1).status()).isEqualTo(org.inagg.wire.RejectReason.UNKNOWN_JOB);
    }

    @Test
    void shouldGiveShorterRemainingWorkAHigherPriority()
    {
        int previous = EsaSwitch.srfPriority(0);
        assertThat(previous).isEqualTo(255);
        for (long bytes = 1; bytes < (1L << 44); bytes = bytes * 3 / 2 + 1)
        {
            final int p = EsaSwitch.srfPriority(bytes);
            assertThat(p).isBetween(1, previous);
            previous = p;
        }
        assertThat(EsaSwitch.srfPriority(1 << 20)).isGreaterThan(EsaSwitch.srfPriority(1 << 24));
    }

    @Test
    void shouldPreemptByRemainingWorkUnderShortestRemainingFirst()
    {
        sw = new EsaSwitch(transport, new CounterRegistry(64),
            new EsaSwitchSettings(1, 4, 4, AllocationMode.PREEMPTIVE, PriorityPolicy.SHORTEST_REMAINING_FIRST, 16));
        sw.addJob(new EsaJobConfig(A, 3, 4, 8, 0, new int[] {100, 101, 102}, SERVER_A, 1L << 30));
        sw.addJob(new EsaJobConfig(B, 2, 4, 8, 0, new int[] {200, 201}, SERVER_B, 1L << 20));
        sw.applyControl();
        assertThat(sw.tablePriority(B)).isGreaterThan(sw.tablePriority(A));

        send(A, 0, 10, 255, 0, 1, 1, 1, 1);     // the header's priority is ignored under SRF
        send(B, 0, 5, 0, 0, 1, 1, 1, 1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::status)
            .containsExactly(EsaWire.REASON_PREEMPTED);

        // The control plane reports job A nearly done: now A outranks B.
        sw.setRemainingBytes(A, 1024);
        sw.applyControl();
        send(A, 0, 11, 0, 0, 1, 1, 1, 1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::status)
            .containsExactly(EsaWire.REASON_PREEMPTED);
    }

    @Test
    void shouldCarryAReduceScatterMaximumWithItsLanesToTheOwnerAloneAndItsCopyNamingIt()
    {
        start(AllocationMode.PREEMPTIVE);
        final int rsMax = InaggHeader.collectiveFlags(InaggHeader.COLLECTIVE_REDUCE_SCATTER, InaggHeader.OP_MAX);
        send(B, 0, 5, 0, rsMax, 1, 20, -3, 4);                      // Priority 0, Status 0: Owner 0
        send(B, 1, 5, 0, rsMax, 10, 2, -30, 4);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(200, 201, SERVER_B);
        assertThat(out.get(0).lanes()).containsExactly(10, 20, -3, 4);
        assertThat(InaggHeader.elementCount(out.get(1).segment(), 0)).as("header-only to the non-Owner").isZero();
        assertThat(InaggHeader.collective(out.get(1).segment(), 0)).isEqualTo(InaggHeader.COLLECTIVE_REDUCE_SCATTER);
        final MemorySegment copy = out.get(2).segment();
        assertThat(out.get(2).type()).isEqualTo(EsaWire.TYPE_PARTIAL);
        assertThat(out.get(2).status()).isEqualTo(EsaWire.REASON_COMPLETE);
        assertThat(InaggHeader.reduceOp(copy, 0)).isEqualTo(InaggHeader.OP_MAX);
        assertThat(EsaWire.partialOwner(copy, 0)).isZero();
        assertThat(CaptureTransport.partialLanes(out.get(2))).containsExactly(10, 20, -3, 4);
        assertThat(EsaWire.partialBitmapWord(copy, 0, 0)).isEqualTo(0b11);
        assertThat(sw.counter(EsaCounter.DROP_UNSUPPORTED)).isZero();
    }

    @Test
    void shouldDropReservedCollectivesOpsAndFlagsAsUnsupported()
    {
        start(AllocationMode.PREEMPTIVE);
        send(B, 0, 5, 1, 3 << InaggHeader.COLLECTIVE_SHIFT, 1, 2);
        send(B, 0, 5, 1, 3 << InaggHeader.OP_SHIFT, 1, 2);
        send(B, 0, 5, 1, InaggHeader.FLAG_RESERVED, 1, 2);
        assertThat(sw.counter(EsaCounter.DROP_UNSUPPORTED)).isEqualTo(3);
        assertThat(sw.counter(EsaCounter.ALLOCATIONS)).isZero();
        assertThat(transport.sent).isEmpty();
    }
}
