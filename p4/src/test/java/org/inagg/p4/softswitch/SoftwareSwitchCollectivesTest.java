package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.wire.InaggHeader.COLLECTIVE_ALL_GATHER;
import static org.inagg.wire.InaggHeader.COLLECTIVE_ALL_REDUCE;
import static org.inagg.wire.InaggHeader.COLLECTIVE_REDUCE_SCATTER;
import static org.inagg.wire.InaggHeader.OP_MAX;
import static org.inagg.wire.InaggHeader.OP_MIN;
import static org.inagg.wire.InaggHeader.OP_SUM;

/**
 * The switch's collectives and reduce ops (docs/wire-format.md, "Collectives and reduce ops"), packet by packet: three
 * workers, worker i is transport peer 100 + i; every case checks what each worker receives.
 */
class SoftwareSwitchCollectivesTest
{
    private static final int JOB = 9;
    private static final int WORKERS = 3;
    private static final int LANES = 4;
    private static final int[][] INPUTS = {{5, -1, 0, Integer.MIN_VALUE}, {-7, 3, 0, 9}, {2, 2, Integer.MAX_VALUE, -4}};

    private final CaptureTransport transport = new CaptureTransport();
    private final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);

    @BeforeEach
    void joinEveryWorker()
    {
        sw.addJob(new SwitchJobConfig(JOB, WORKERS, 2, LANES));
        sw.doWork();
        transport.joinAll(sw, JOB, WORKERS, 100);
    }

    @ParameterizedTest
    @ValueSource(ints = {OP_SUM, OP_MIN, OP_MAX})
    void shouldCombineAnAllReduceWithItsOpAndSendTheResultToEveryWorker(final int op)
    {
        for (int w = 0; w < WORKERS; w++)
        {
            deliver(packet(w, COLLECTIVE_ALL_REDUCE, op, 0, 0, 10, INPUTS[w]), 100 + w);
        }
        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        for (final CaptureTransport.Sent sent : out)
        {
            assertThat(sent.lanes()).containsExactly(reference(op));
            assertThat(InaggHeader.reduceOp(sent.segment(), 0)).isEqualTo(op);
            assertThat(InaggHeader.collective(sent.segment(), 0)).isEqualTo(COLLECTIVE_ALL_REDUCE);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {OP_SUM, OP_MIN, OP_MAX})
    void shouldSendAReduceScatterResultWithLanesToTheOwnerOnlyWhicheverArrivesLast(final int op)
    {
        for (final int last : new int[] {0, 1})
        {
            final int sequence = 20 + 2 * last;
            final int copy = last;
            final int owner = 1;
            final int[] order = last == 1 ? new int[] {0, 2, 1} : new int[] {1, 2, 0};
            for (final int w : order)
            {
                deliver(packet(w, COLLECTIVE_REDUCE_SCATTER, op, owner, copy, sequence, INPUTS[w]), 100 + w);
            }
            final List<CaptureTransport.Sent> out = transport.drain();
            assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
            for (int w = 0; w < WORKERS; w++)
            {
                final MemorySegment m = out.get(w).segment();
                assertThat(InaggHeader.flags(m, 0) & InaggHeader.FLAG_RESULT).isNotZero();
                assertThat(InaggHeader.workerId(m, 0)).isEqualTo(w);
                assertThat(InaggHeader.owner(m, 0)).isEqualTo(owner);
                assertThat(InaggHeader.collective(m, 0)).isEqualTo(COLLECTIVE_REDUCE_SCATTER);
                assertThat(InaggHeader.sequence(m, 0)).isEqualTo(sequence);
                if (w == owner)
                {
                    assertThat(out.get(w).lanes()).containsExactly(reference(op));
                }
                else
                {
                    assertThat(out.get(w).bytes()).as("header-only").hasSize(InaggHeader.LENGTH);
                    assertThat(InaggHeader.elementCount(m, 0)).isZero();
                }
            }
        }
    }

    @Test
    void shouldCarryTheNextExponentToEveryWorkerOfAReduceScatter()
    {
        final int[] exponents = {3, 9, -2};
        for (int w = 0; w < WORKERS; w++)
        {
            final MemorySegment m = packet(w, COLLECTIVE_REDUCE_SCATTER, OP_SUM, 2, 0, 4);
            InaggHeader.setFlags(m, 0, InaggHeader.flags(m, 0) & ~InaggHeader.FLAG_INT32);
            InaggHeader.setNextExponent(m, 0, exponents[w]);
            deliver(m, 100 + w);
        }
        assertThat(transport.sent).hasSize(WORKERS);
        assertThat(transport.sent).allSatisfy(s -> assertThat(InaggHeader.nextExponent(s.segment(), 0)).isEqualTo(9));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2})
    void shouldGatherTheOwnersLanesWhereverTheOwnerArrivesAndIgnoreTheOp(final int ownerPosition)
    {
        final int owner = 2;
        final int[] others = {0, 1};
        int other = 0;
        for (int position = 0; position < WORKERS; position++)
        {
            if (position == ownerPosition)
            {
                deliver(packet(owner, COLLECTIVE_ALL_GATHER, OP_MIN, owner, 1, 31, INPUTS[owner]), 100 + owner);
            }
            else
            {
                final int w = others[other++];
                deliver(packet(w, COLLECTIVE_ALL_GATHER, OP_MIN, owner, 1, 31), 100 + w);
            }
            if (position < WORKERS - 1)
            {
                assertThat(transport.sent).as("held until every worker contributed").isEmpty();
            }
        }
        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101, 102);
        assertThat(out).allSatisfy(s -> assertThat(s.lanes()).containsExactly(INPUTS[owner]));
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isEqualTo(WORKERS);
    }

    @Test
    void shouldBroadcastAsAnAllGatherWithOneRootInEveryPacketOfEverySlot()
    {
        final int root = 0;
        for (int slot = 0; slot < 2; slot++)
        {
            for (int w = WORKERS - 1; w >= 0; w--)
            {
                final MemorySegment m = w == root
                    ? packet(w, COLLECTIVE_ALL_GATHER, OP_SUM, root, 0, slot, INPUTS[slot])
                    : packet(w, COLLECTIVE_ALL_GATHER, OP_SUM, root, 0, slot);
                InaggHeader.write(m, 0, MessageType.AGGREGATE, InaggHeader.flags(m, 0), JOB, w, slot, 0, slot,
                    w == root ? LANES : 0, 0, InaggHeader.NO_EXPONENT, 0);
                InaggHeader.setOwner(m, 0, root);
                deliver(m, 100 + w);
            }
            final int expected = slot;
            assertThat(transport.drain()).allSatisfy(s -> assertThat(s.lanes()).containsExactly(INPUTS[expected]));
        }
    }

    @Test
    void shouldDropDuplicatesOfEveryCollectiveWithoutCountingThemAgain()
    {
        deliver(packet(0, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 0, 4), 100);
        deliver(packet(0, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 0, 4), 100);
        deliver(packet(1, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 0, 4, INPUTS[1]), 101);
        deliver(packet(1, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 0, 4, INPUTS[0]), 101);
        assertThat(transport.sent).isEmpty();
        deliver(packet(2, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 0, 4), 102);
        assertThat(transport.drain()).allSatisfy(s -> assertThat(s.lanes()).containsExactly(INPUTS[1]));

        deliver(packet(0, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 0, 1, 6, INPUTS[0]), 100);
        deliver(packet(0, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 0, 1, 6, INPUTS[0]), 100);
        deliver(packet(1, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 0, 1, 6, INPUTS[1]), 101);
        deliver(packet(2, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 0, 1, 6, INPUTS[2]), 102);
        assertThat(transport.drain().getFirst().lanes()).containsExactly(reference(OP_MAX));
        assertThat(sw.counter(SwitchCounter.DUPLICATES)).isEqualTo(3);
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isEqualTo(6);
    }

    @Test
    void shouldAnswerRetransmissionsOfACompleteRoundAsItsResultWas()
    {
        for (int w = 0; w < WORKERS; w++)
        {
            deliver(packet(w, COLLECTIVE_REDUCE_SCATTER, OP_MIN, 2, 0, 8, INPUTS[w]), 100 + w);
        }
        transport.sent.clear();
        deliver(packet(0, COLLECTIVE_REDUCE_SCATTER, OP_MIN, 2, 0, 8, INPUTS[0]), 100);
        deliver(packet(2, COLLECTIVE_REDUCE_SCATTER, OP_MIN, 2, 0, 8, INPUTS[2]), 102);
        List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 102);
        assertThat(out.get(0).bytes()).hasSize(InaggHeader.LENGTH);
        assertThat(out.get(1).lanes()).containsExactly(reference(OP_MIN));

        for (int w = 0; w < WORKERS; w++)
        {
            deliver(w == 1 ? packet(w, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 1, 10, INPUTS[1])
                : packet(w, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 1, 10), 100 + w);
        }
        transport.sent.clear();
        deliver(packet(0, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 1, 10), 100);
        deliver(packet(1, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 1, 10, INPUTS[1]), 101);
        out = transport.drain();
        assertThat(out).extracting(CaptureTransport.Sent::peer).containsExactly(100, 101);
        assertThat(out).allSatisfy(s -> assertThat(s.lanes()).containsExactly(INPUTS[1]));
        assertThat(sw.counter(SwitchCounter.RETRANSMIT_REPLIES)).isEqualTo(4);
    }

    @Test
    void shouldDropAnOwnerThatIsNotAWorkerOfTheJob()
    {
        deliver(packet(0, COLLECTIVE_REDUCE_SCATTER, OP_SUM, WORKERS, 0, 2, INPUTS[0]), 100);
        deliver(packet(0, COLLECTIVE_ALL_GATHER, OP_SUM, 0xFFFF, 0, 2), 100);
        assertThat(sw.counter(SwitchCounter.DROP_UNKNOWN_WORKER)).isEqualTo(2);
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isZero();
        // An ALL_REDUCE's bytes 16..17 are Priority and Status, never an Owner.
        final MemorySegment allReduce = packet(0, COLLECTIVE_ALL_REDUCE, OP_SUM, 0xFFFF, 0, 2, INPUTS[0]);
        deliver(allReduce, 100);
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isEqualTo(1);
    }

    @Test
    void shouldDropReservedCollectivesAndOpsAsUnsupportedAndTheReservedFlagAsMalformed()
    {
        final MemorySegment collective = packet(0, 3, OP_SUM, 0, 0, 2, INPUTS[0]);
        final MemorySegment op = packet(0, COLLECTIVE_ALL_REDUCE, 3, 0, 0, 2, INPUTS[0]);
        final MemorySegment reserved = packet(0, COLLECTIVE_ALL_REDUCE, OP_SUM, 0, 0, 2, INPUTS[0]);
        InaggHeader.setFlags(reserved, 0, InaggHeader.flags(reserved, 0) | InaggHeader.FLAG_RESERVED);
        deliver(collective, 100);
        deliver(op, 100);
        deliver(reserved, 100);
        assertThat(sw.counter(SwitchCounter.DROP_UNSUPPORTED)).isEqualTo(2);
        assertThat(sw.counter(SwitchCounter.DROP_MALFORMED)).isEqualTo(1); // as the P4 programs count it
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isZero();
        assertThat(transport.sent).isEmpty();
    }

    @Test
    void shouldDropAllGatherLanesFromANonOwnerAHeaderOnlyOwnerAndMismatchedReduceScatterSizes()
    {
        deliver(packet(0, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 0, 2, INPUTS[0]), 100);
        deliver(packet(1, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 0, 2), 101);
        deliver(packet(0, COLLECTIVE_REDUCE_SCATTER, OP_SUM, 1, 1, 4, INPUTS[0]), 100);
        deliver(packet(1, COLLECTIVE_REDUCE_SCATTER, OP_SUM, 1, 1, 4, 1, 2), 101);
        assertThat(sw.counter(SwitchCounter.DROP_BAD_SIZE)).isEqualTo(3);
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isEqualTo(1);
    }

    @Test
    void shouldSendEveryCollectiveOfATwoLevelJobUpAsAPartialNamingItsCollectiveOpAndOwner()
    {
        final CaptureTransport upstream = new CaptureTransport();
        final SoftwareSwitch two = new SoftwareSwitch(upstream, new CounterRegistry(64), 16);
        two.addJob(new SwitchJobConfig(JOB, WORKERS, 2, LANES, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, new int[] {100, 101, 102}), new UpstreamAggregation(50, new int[] {0}));
        two.doWork();
        final MemorySegment rs = packet(0, COLLECTIVE_REDUCE_SCATTER, OP_MAX, 2, 0, 2, INPUTS[0]);
        final MemorySegment gather = packet(0, COLLECTIVE_ALL_GATHER, OP_SUM, 1, 1, 3);
        final MemorySegment min = packet(0, COLLECTIVE_ALL_REDUCE, OP_MIN, 0, 0, 4, INPUTS[0]);
        two.onMessage(rs, 0, (int)rs.byteSize(), 100);
        two.onMessage(gather, 0, (int)gather.byteSize(), 100);
        two.onMessage(min, 0, (int)min.byteSize(), 100);
        assertThat(two.counter(SwitchCounter.DROP_UNSUPPORTED)).isZero();
        assertThat(upstream.sent).extracting(CaptureTransport.Sent::peer).containsExactly(50, 50, 50);
        final MemorySegment rsUp = upstream.sent.get(0).segment();
        assertThat(InaggHeader.collective(rsUp, 0)).isEqualTo(COLLECTIVE_REDUCE_SCATTER);
        assertThat(InaggHeader.reduceOp(rsUp, 0)).isEqualTo(OP_MAX);
        assertThat(EsaWire.partialOwner(rsUp, 0)).isEqualTo(2);
        assertThat(CaptureTransport.partialLanes(upstream.sent.get(0))).containsExactly(INPUTS[0]);
        assertThat(EsaWire.partialBitmapWord(rsUp, 0, 0)).isEqualTo(0b1);
        final MemorySegment gatherUp = upstream.sent.get(1).segment();
        assertThat(EsaWire.partialLanes(gatherUp, 0)).as("the Owner, worker 1, is not local").isZero();
        assertThat(EsaWire.partialOwner(gatherUp, 0)).isEqualTo(1);
        final MemorySegment minUp = upstream.sent.get(2).segment();
        assertThat(InaggHeader.reduceOp(minUp, 0)).isEqualTo(OP_MIN);
        assertThat(minUp.byteSize()).as("no Owner word in an ALL_REDUCE PARTIAL")
            .isEqualTo(EsaWire.partialLength(INPUTS[0].length, WORKERS));

        // A retransmission of the complete ALL_GATHER round (copy 1's latest) goes up raw with its Owner intact.
        upstream.sent.clear();
        two.onMessage(gather, 0, (int)gather.byteSize(), 100);
        assertThat(upstream.sent).hasSize(1);
        assertThat(upstream.sent.getFirst().type()).isEqualTo(MessageType.AGGREGATE);
        assertThat(InaggHeader.owner(upstream.sent.getFirst().segment(), 0)).isEqualTo(1);
        assertThat(two.counter(SwitchCounter.UPSTREAM_FORWARDS)).isEqualTo(1);
    }

    // -------------------------------------------------------------------------------------------------------------

    private static int[] reference(final int op)
    {
        final int[] result = INPUTS[0].clone();
        for (int w = 1; w < WORKERS; w++)
        {
            for (int k = 0; k < LANES; k++)
            {
                result[k] = op == OP_MIN ? Math.min(result[k], INPUTS[w][k])
                    : op == OP_MAX ? Math.max(result[k], INPUTS[w][k]) : result[k] + INPUTS[w][k];
            }
        }
        return result;
    }

    private void deliver(final MemorySegment message, final int peer)
    {
        sw.onMessage(message, 0, (int)message.byteSize(), peer);
    }

    /** An INT32 AGGREGATE of slot 0 (copy {@code copy}) with the collective, op and Owner. */
    private static MemorySegment packet(
        final int worker, final int collective, final int op, final int owner, final int copy, final int sequence,
        final int... lanes)
    {
        final MemorySegment m = Arena.ofAuto().allocate(InaggHeader.messageLength(lanes.length));
        InaggHeader.write(m, 0, MessageType.AGGREGATE,
            InaggHeader.FLAG_INT32 | InaggHeader.collectiveFlags(collective, op), JOB, worker, 0, copy, sequence,
            lanes.length, 0, InaggHeader.NO_EXPONENT, 0);
        InaggHeader.setOwner(m, 0, owner);
        for (int i = 0; i < lanes.length; i++)
        {
            InaggHeader.setElement(m, 0, i, lanes[i]);
        }
        return m;
    }
}
