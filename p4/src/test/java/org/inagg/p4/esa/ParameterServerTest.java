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
import static org.inagg.p4.testing.CaptureTransport.aggregateOfSession;
import static org.inagg.p4.testing.CaptureTransport.collectiveAggregate;
import static org.inagg.p4.testing.CaptureTransport.collectivePartial;
import static org.inagg.p4.testing.CaptureTransport.deliver;
import static org.inagg.p4.testing.CaptureTransport.partial;
import static org.inagg.p4.testing.CaptureTransport.partialOfSession;
import static org.inagg.wire.InaggHeader.COLLECTIVE_ALL_GATHER;
import static org.inagg.wire.InaggHeader.COLLECTIVE_ALL_REDUCE;
import static org.inagg.wire.InaggHeader.COLLECTIVE_REDUCE_SCATTER;
import static org.inagg.wire.InaggHeader.OP_MAX;
import static org.inagg.wire.InaggHeader.OP_MIN;
import static org.inagg.wire.InaggHeader.OP_SUM;

/** The parameter server's merge: job 1, three workers at peers 100..102, the switch at peer 0. */
class ParameterServerTest
{
    private static final int JOB = 1;
    private static final int SWITCH = 0;

    private final CaptureTransport transport = new CaptureTransport();
    private ParameterServer server;

    private void start(final boolean resultsViaSwitch)
    {
        server = new ParameterServer(transport, new CounterRegistry(64), 16, 8);
        server.addJob(new ServerJobConfig(JOB, 3, new int[] {100, 101, 102}, SWITCH, resultsViaSwitch));
        server.applyControl();
    }

    @Test
    void shouldMergeRawFragmentsAndPartialsIntoTheExactSumAndSendItToEveryWorker()
    {
        start(false);
        deliver(server, aggregate(JOB, 0, 20, 0, 0, 1, 2, 3, 4), SWITCH);
        deliver(server, partial(JOB, 3, 20, EsaWire.REASON_PREEMPTED, 0b110, 10, 20, 30, 40), SWITCH);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        for (int w = 0; w < 3; w++)
        {
            final var m = out.get(w).segment();
            assertThat(InaggHeader.type(m, 0)).isEqualTo(MessageType.AGGREGATE);
            assertThat(InaggHeader.flags(m, 0)).isEqualTo(InaggHeader.FLAG_RESULT | InaggHeader.FLAG_INT32);
            assertThat(InaggHeader.workerId(m, 0)).isEqualTo(w);
            assertThat(InaggHeader.sequence(m, 0)).isEqualTo(20);
            assertThat(InaggHeader.slotIndex(m, 0)).isEqualTo(20 % 7);
            assertThat(InaggHeader.shadowCopy(m, 0)).isZero();
            assertThat(out.get(w).lanes()).containsExactly(11, 22, 33, 44);
        }
        assertThat(server.openBlocks(JOB)).isZero();
        assertThat(server.counter(ServerCounter.COMPLETED)).isEqualTo(1);
    }

    @Test
    void shouldNeverCountAWorkerTwice()
    {
        start(false);
        deliver(server, aggregate(JOB, 0, 21, 0, 0, 1, 1, 1, 1), SWITCH);
        deliver(server, aggregate(JOB, 0, 21, 0, InaggHeader.FLAG_RETRANSMIT, 1, 1, 1, 1), SWITCH);
        deliver(server, partial(JOB, 3, 21, EsaWire.REASON_FLUSHED, 0b001, 1, 1, 1, 1), SWITCH);
        assertThat(server.counter(ServerCounter.DUPLICATES)).isEqualTo(2);
        // Overlaps worker 0 in part: its sum cannot be split, so it is dropped; workers 1 and 2 come raw.
        deliver(server, partial(JOB, 3, 21, EsaWire.REASON_PREEMPTED, 0b011, 5, 5, 5, 5), SWITCH);
        assertThat(server.counter(ServerCounter.OVERLAPS)).isEqualTo(1);
        assertThat(transport.sent).isEmpty();
        deliver(server, aggregate(JOB, 1, 21, 0, InaggHeader.FLAG_RETRANSMIT, 4, 4, 4, 4), SWITCH);
        deliver(server, aggregate(JOB, 2, 21, 0, 0, 100, 100, 100, 100), SWITCH);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).hasSize(3);
        assertThat(out.get(0).lanes()).containsExactly(105, 105, 105, 105);
        // Late pieces of a completed block change nothing.
        deliver(server, partial(JOB, 3, 21, EsaWire.REASON_PREEMPTED, 0b100, 9, 9, 9, 9), SWITCH);
        assertThat(transport.sent).isEmpty();
        assertThat(server.openBlocks(JOB)).isZero();
    }

    @Test
    void shouldAnswerARetransmissionOfABlockTheSwitchCompletedFromItsCopy()
    {
        start(false);
        deliver(server, partial(JOB, 3, 22, EsaWire.REASON_COMPLETE, 0b111, 7, 8, 9, 10), SWITCH);
        assertThat(transport.sent).as("the switch has multicast it already").isEmpty();

        deliver(server, aggregate(JOB, 1, 22, 0, InaggHeader.FLAG_RETRANSMIT, 0, 0, 0, 0), SWITCH);
        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).peer()).isEqualTo(101);
        assertThat(InaggHeader.workerId(out.get(0).segment(), 0)).isEqualTo(1);
        assertThat(InaggHeader.flags(out.get(0).segment(), 0) & InaggHeader.FLAG_RESULT).isNotZero();
        assertThat(out.get(0).lanes()).containsExactly(7, 8, 9, 10);
        assertThat(server.openBlocks(JOB)).isZero();
    }

    @Test
    void shouldForgetACompletedSumOnlyWhenANewerRoundTakesItsSlotCopy()
    {
        start(false);
        // The helpers put sequence s on slot s % 7, copy s & 1: sequences 0 and 14 share slot 0, copy 0.
        for (int s = 0; s < 14; s++)
        {
            deliver(server, partial(JOB, 3, s, EsaWire.REASON_COMPLETE, 0b111, s), SWITCH);
        }
        deliver(server, aggregate(JOB, 0, 0, 0, InaggHeader.FLAG_RETRANSMIT, 0), SWITCH);
        assertThat(transport.drain()).as("13 newer blocks on other slot copies keep block 0").hasSize(1);
        deliver(server, partial(JOB, 3, 14, EsaWire.REASON_COMPLETE, 0b111, 14), SWITCH);
        deliver(server, aggregate(JOB, 0, 0, 0, InaggHeader.FLAG_RETRANSMIT, 0), SWITCH);
        assertThat(transport.drain()).as("block 14 took block 0's slot copy").isEmpty();
        assertThat(server.counter(ServerCounter.LATE)).isEqualTo(2);
        deliver(server, aggregate(JOB, 0, 14, 0, InaggHeader.FLAG_RETRANSMIT, 0), SWITCH);
        assertThat(transport.drain()).hasSize(1);
    }

    @Test
    void shouldDropAPartialNamingWorkersTheJobDoesNotHave()
    {
        start(false);
        // Workers 1 and "3" of a 3-worker job (a switch configured with more workers than the server): counting bit 3
        // would complete the block without worker 2.
        deliver(server, partial(JOB, 3, 25, EsaWire.REASON_SUBTREE, 0b1010, 5, 5, 5, 5), SWITCH);
        deliver(server, aggregate(JOB, 0, 25, 0, 0, 1, 1, 1, 1), SWITCH);
        assertThat(transport.drain()).isEmpty();
        assertThat(server.counter(ServerCounter.DROP_MALFORMED)).isEqualTo(1);
    }

    @Test
    void shouldSendResultsThroughTheSwitchUnderAtp()
    {
        start(true);
        deliver(server, partial(JOB, 3, 23, EsaWire.REASON_COMPLETE, 0b111, 1, 2, 3, 4), SWITCH);
        deliver(server, aggregate(JOB, 0, 24, 0, 0, 1, 1, 1, 1), SWITCH);
        deliver(server, aggregate(JOB, 1, 24, 0, 0, 1, 1, 1, 1), SWITCH);
        deliver(server, aggregate(JOB, 2, 24, 0, 0, 1, 1, 1, 1), SWITCH);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(SWITCH, SWITCH);
        assertThat(out.get(0).lanes()).containsExactly(1, 2, 3, 4);
        assertThat(out.get(1).lanes()).containsExactly(3, 3, 3, 3);
        assertThat(InaggHeader.flags(out.get(1).segment(), 0) & InaggHeader.FLAG_RESULT).isNotZero();
    }

    @Test
    void shouldCombineMinimaFromRawFragmentsAndPartialsWithTheirOp()
    {
        start(false);
        deliver(server, collectiveAggregate(JOB, 0, 20, COLLECTIVE_ALL_REDUCE, OP_MIN, 0, 5, -1, 7, 0), SWITCH);
        deliver(server, collectivePartial(JOB, 3, 20, COLLECTIVE_ALL_REDUCE, OP_MIN, 0, 0b110, 3, 2, 9, -4), SWITCH);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        for (final CaptureTransport.Sent sent : out)
        {
            assertThat(sent.lanes()).containsExactly(3, -1, 7, -4);
            assertThat(InaggHeader.reduceOp(sent.segment(), 0)).isEqualTo(OP_MIN);
        }
    }

    @Test
    void shouldSendAReduceScattersLanesToItsOwnerAloneAndAnswerRetransmissionsTheSameWay()
    {
        start(false);
        deliver(server, collectivePartial(JOB, 3, 21, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 1, 0b011, 1, 20), SWITCH);
        deliver(server, collectiveAggregate(JOB, 2, 21, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 1, 10, 2), 102);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        assertThat(out).extracting(sent -> InaggHeader.elementCount(sent.segment(), 0)).containsExactly(0, 2, 0);
        assertThat(out.get(1).lanes()).containsExactly(10, 20);
        for (final CaptureTransport.Sent sent : out)
        {
            assertThat(InaggHeader.collective(sent.segment(), 0)).isEqualTo(COLLECTIVE_REDUCE_SCATTER);
            assertThat(InaggHeader.owner(sent.segment(), 0)).isEqualTo(1);
        }

        deliver(server, collectiveAggregate(JOB, 0, 21, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 1, 1, 2), SWITCH);
        deliver(server, collectiveAggregate(JOB, 1, 21, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 1, 1, 2), SWITCH);
        final List<CaptureTransport.Sent> answers = transport.drain();
        assertThat(answers).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101);
        assertThat(answers).extracting(sent -> InaggHeader.elementCount(sent.segment(), 0)).containsExactly(0, 2);
        assertThat(answers.get(1).lanes()).containsExactly(10, 20);
        assertThat(server.counter(ServerCounter.RETRANSMIT_REPLIES)).isEqualTo(2);
    }

    @Test
    void shouldGatherTheOwnersLanesWhicheverWayTheyCome()
    {
        start(false);
        deliver(server, collectiveAggregate(JOB, 0, 22, COLLECTIVE_ALL_GATHER, OP_SUM, 1), SWITCH);
        deliver(server, collectivePartial(JOB, 3, 22, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 0b110, 7, 8, 9), SWITCH);
        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        for (final CaptureTransport.Sent sent : out)
        {
            assertThat(sent.lanes()).containsExactly(7, 8, 9);
        }

        // Lanes from a partial without the Owner, and none from the Owner, are dropped as the switch drops them.
        deliver(server, collectivePartial(JOB, 3, 23, COLLECTIVE_ALL_GATHER, OP_SUM, 0, 0b110, 7, 8, 9), SWITCH);
        deliver(server, collectiveAggregate(JOB, 0, 23, COLLECTIVE_ALL_GATHER, OP_SUM, 0), SWITCH);
        assertThat(server.counter(ServerCounter.DROP_BAD_SIZE)).isEqualTo(2);
        assertThat(server.openBlocks(JOB)).isZero();
        assertThat(transport.sent).isEmpty();
    }

    @Test
    void shouldDropReservedCollectivesAndOpsAsUnsupported()
    {
        start(false);
        deliver(server, aggregate(JOB, 0, 22, 0, 3 << InaggHeader.COLLECTIVE_SHIFT, 1, 1, 1, 1), SWITCH);
        deliver(server, aggregate(JOB, 1, 22, 0, 3 << InaggHeader.OP_SHIFT, 1, 1, 1, 1), SWITCH);
        assertThat(server.counter(ServerCounter.DROP_UNSUPPORTED)).isEqualTo(2);
        assertThat(server.openBlocks(JOB)).isZero();
        assertThat(transport.sent).isEmpty();
    }

    /**
     * A PARTIAL of the old run delayed past a restart (a reordering network) would complete the new run's block with
     * the old run's sum: it carries its session, so it is dropped and counted, unanswered, and the new run's result is
     * exact.
     */
    @Test
    void shouldDropAnOldRunsPartialDelayedPastARestartAndKeepTheNewRunExact()
    {
        start(false);
        deliver(server, partialOfSession(JOB, 0, 3, 20, EsaWire.REASON_SUBTREE, 0b110, 10, 20, 30, 40), SWITCH);
        // The run restarts behind the switch: its first PARTIAL of session 1 starts that session here.
        deliver(server, partialOfSession(JOB, 1, 3, 20, EsaWire.REASON_SUBTREE, 0b110, 1, 2, 3, 4), SWITCH);
        assertThat(server.session(JOB)).isEqualTo(1);
        assertThat(server.openBlocks(JOB)).as("the old run's block freed, the new run's open").isEqualTo(1);

        deliver(server, partialOfSession(JOB, 0, 3, 20, EsaWire.REASON_PREEMPTED, 0b001, 100, 100, 100, 100), SWITCH);
        assertThat(transport.sent).as("never answered, never merged").isEmpty();
        assertThat(server.counter(ServerCounter.DROP_STALE_SESSION)).isEqualTo(1);
        assertThat(server.counter(ServerCounter.PARTIALS_MERGED)).isEqualTo(2);

        deliver(server, aggregateOfSession(JOB, 1, 0, 20, 0, 5, 5, 5, 5), 100);
        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        for (final CaptureTransport.Sent result : out)
        {
            assertThat(result.lanes()).containsExactly(6, 7, 8, 9);
            assertThat(InaggHeader.session(result.segment(), 0)).isEqualTo(1);
        }
        assertThat(server.session(JOB)).isEqualTo(1);
    }

    /** A new run's first message from its switch may be a PARTIAL: it starts the run here as a forwarded packet does. */
    @Test
    void shouldStartANewerSessionOnAPartialFromASwitchOfTheJob()
    {
        start(false);
        deliver(server, aggregate(JOB, 0, 20, 0, 0, 7, 7, 7, 7), 100);
        assertThat(server.openBlocks(JOB)).isEqualTo(1);

        // The configured switch: session 2 starts, the old run's open block is gone, the PARTIAL is merged.
        deliver(server, partialOfSession(JOB, 2, 3, 20, EsaWire.REASON_SUBTREE, 0b011, 10, 20, 30, 40), SWITCH);
        assertThat(server.session(JOB)).isEqualTo(2);
        assertThat(server.counter(ServerCounter.PARTIALS_MERGED)).isEqualTo(1);
        deliver(server, aggregateOfSession(JOB, 2, 2, 20, 0, 1, 1, 1, 1), 102);
        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).hasSize(3);
        assertThat(out.get(0).lanes()).as("worker 0's fragment of the old run is not in it").containsExactly(11, 21,
            31, 41);

        // A peer known as a switch of the job (it sent a PARTIAL of the current session) may move it on as well.
        deliver(server, partialOfSession(JOB, 2, 3, 21, EsaWire.REASON_SUBTREE, 0b001, 1, 1, 1, 1), 5);
        deliver(server, partialOfSession(JOB, 3, 3, 22, EsaWire.REASON_SUBTREE, 0b001, 1, 1, 1, 1), 5);
        assertThat(server.session(JOB)).isEqualTo(3);
        assertThat(server.counter(ServerCounter.DROP_SOURCE_MISMATCH)).isZero();
        assertThat(server.counter(ServerCounter.DROP_STALE_SESSION)).isZero();
    }

    /** A PARTIAL of a newer session from a peer that is no switch of the job would free its blocks: dropped. */
    @Test
    void shouldDropAPartialOfANewerSessionFromAStranger()
    {
        start(false);
        deliver(server, aggregate(JOB, 0, 20, 0, 0, 7, 7, 7, 7), 100);
        deliver(server, partialOfSession(JOB, 1, 3, 20, EsaWire.REASON_SUBTREE, 0b110, 1, 1, 1, 1), 77);
        assertThat(server.session(JOB)).isZero();
        assertThat(server.openBlocks(JOB)).isEqualTo(1);
        assertThat(server.counter(ServerCounter.DROP_SOURCE_MISMATCH)).isEqualTo(1);
        assertThat(transport.sent).isEmpty();

        // Nor does it make the stranger a switch of the job: its forwarded fragment of session 1 is refused too.
        deliver(server, aggregateOfSession(JOB, 1, 1, 20, InaggHeader.FLAG_RETRANSMIT, 1, 1, 1, 1), 77);
        assertThat(server.session(JOB)).isZero();
        assertThat(server.counter(ServerCounter.DROP_SOURCE_MISMATCH)).isEqualTo(2);
        assertThat(server.counter(ServerCounter.PARTIALS_MERGED)).isZero();
    }

    /**
     * A job without a configured switch (ESA results straight to the workers, whose first peer is also the switch's)
     * knows its switch only by its PARTIALs: one whose first PARTIAL here is of a newer session (the workers restarted
     * before any block completed, or this server did) is its switch all the same, and starts that session. An older
     * one is stale whoever sends it.
     */
    @Test
    void shouldLearnItsSwitchFromANewerSessionsPartialWhenNoneIsConfigured()
    {
        server = new ParameterServer(transport, new CounterRegistry(64), 16, 8);
        server.addJob(new ServerJobConfig(JOB, 3, new int[] {100, 101, 102}, 100, false));
        server.applyControl();
        deliver(server, partialOfSession(JOB, 1, 3, 20, EsaWire.REASON_SUBTREE, 0b110, 10, 20, 30, 40), 5);
        assertThat(server.session(JOB)).isEqualTo(1);
        assertThat(server.counter(ServerCounter.PARTIALS_MERGED)).isEqualTo(1);
        deliver(server, aggregateOfSession(JOB, 1, 0, 20, InaggHeader.FLAG_RETRANSMIT, 1, 2, 3, 4), 5);
        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        for (final CaptureTransport.Sent result : out)
        {
            assertThat(result.lanes()).containsExactly(11, 22, 33, 44);
        }

        deliver(server, partialOfSession(JOB, 0, 3, 21, EsaWire.REASON_SUBTREE, 0b110, 1, 1, 1, 1), 77);
        assertThat(server.counter(ServerCounter.DROP_STALE_SESSION)).isEqualTo(1);
        assertThat(server.counter(ServerCounter.DROP_SOURCE_MISMATCH)).isZero();
        assertThat(transport.sent).isEmpty();
    }

    /** A raw fragment of a newer session from a peer that never forwarded this job a PARTIAL (nor is its configured
     * switch) must not move the job to that session: it would free every block and abort the direct workers' run. */
    @Test
    void shouldNotLetAStrangerMoveTheJobToANewerSession()
    {
        start(false);
        deliver(server, aggregate(JOB, 0, 30, 0, 0, 1, 2, 3, 4), 100);
        final byte[] spoofed = aggregate(JOB, 0, 31, 0, 0, 9, 9, 9, 9);
        InaggHeader.setSession(MemorySegment.ofArray(spoofed), 0, 1);
        deliver(server, spoofed, 77);
        assertThat(server.session(JOB)).isZero();
        assertThat(server.counter(ServerCounter.DROP_SOURCE_MISMATCH)).isEqualTo(1);

        // The job's first-level switch, known by the PARTIAL it forwarded, may: a run restarted behind it.
        deliver(server, partial(JOB, 3, 30, EsaWire.REASON_SUBTREE, 0b110, 10, 20, 30, 40), 5);
        final byte[] forwarded = aggregate(JOB, 1, 31, 0, InaggHeader.FLAG_RETRANSMIT, 1, 1, 1, 1);
        InaggHeader.setSession(MemorySegment.ofArray(forwarded), 0, 1);
        deliver(server, forwarded, 5);
        assertThat(server.session(JOB)).isEqualTo(1);
    }
}
