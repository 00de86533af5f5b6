package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.p4.testing.CaptureTransport.collectiveAggregate;
import static org.inagg.p4.testing.CaptureTransport.deliver;
import static org.inagg.wire.InaggHeader.COLLECTIVE_ALL_GATHER;
import static org.inagg.wire.InaggHeader.COLLECTIVE_ALL_REDUCE;
import static org.inagg.wire.InaggHeader.COLLECTIVE_REDUCE_SCATTER;
import static org.inagg.wire.InaggHeader.OP_SUM;

/**
 * Results down the aggregation tree ({@link UpstreamAggregation#resultsDown()}), packet by packet: switch S1 sums
 * workers 0-2, switch S2 workers 3-5, and the parameter server sends one round's result once to each switch that asked
 * for it (2 datagrams, not 6), which multicasts it to its workers; every worker gets the bytes the server would have
 * sent it directly. Packets are carried by hand between three {@link CaptureTransport}s, so each send is counted.
 */
class TwoLevelResultsDownTest
{
    private static final int JOB = 4;
    private static final int WORKERS = 6;
    private static final int S1 = 0;
    private static final int S2 = 1;
    private static final int PS = 2;
    private static final int FIRST_WORKER_PEER = 10;
    private static final int SEQUENCE = 12;
    private static final int[] LANES = {5, -3, 7, 11};
    /** Rounds per window of the allocation test. */
    private static final int ROUNDS = 500;

    private final CaptureTransport s1Transport = new CaptureTransport();
    private final CaptureTransport s2Transport = new CaptureTransport();
    private final CaptureTransport psTransport = new CaptureTransport();
    private SoftwareSwitch s1;
    private SoftwareSwitch s2;
    private ParameterServer server;

    private static int[] workerPeers()
    {
        final int[] peers = new int[WORKERS];
        for (int w = 0; w < WORKERS; w++)
        {
            peers[w] = FIRST_WORKER_PEER + w;
        }
        return peers;
    }

    private void start(final boolean s1ResultsDown, final boolean s2ResultsDown)
    {
        final CounterRegistry registry = new CounterRegistry(256);
        final SwitchJobConfig config = new SwitchJobConfig(JOB, WORKERS, 8, LANES.length,
            SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP, workerPeers());
        s1 = new SoftwareSwitch(s1Transport, registry, 16);
        s2 = new SoftwareSwitch(s2Transport, registry, 16);
        s1.addJob(config, new UpstreamAggregation(PS, new int[] {0, 1, 2}, s1ResultsDown));
        s2.addJob(config, new UpstreamAggregation(PS, new int[] {3, 4, 5}, s2ResultsDown));
        s1.doWork();
        s2.doWork();
        server = new ParameterServer(psTransport, registry, 16, 16);
        server.addJob(new ServerJobConfig(JOB, WORKERS, workerPeers(), S1, false));
        server.applyControl();
    }

    /** Worker {@code w}'s contribution: its lanes, or none from a worker not the Owner of an ALL_GATHER. */
    private static byte[] contribution(final int w, final int collective, final int op, final int owner)
    {
        final int[] lanes = new int[LANES.length];
        for (int k = 0; k < lanes.length; k++)
        {
            lanes[k] = LANES[k] * (w + 1) - w * k;
        }
        return collectiveAggregate(JOB, w, SEQUENCE, collective, op, owner,
            collective == COLLECTIVE_ALL_GATHER && w != owner ? new int[0] : lanes);
    }

    /** Every worker's contribution to its switch, each switch's PARTIAL to the server; the server's sends. */
    private List<CaptureTransport.Sent> roundToTheServer(final int collective, final int op, final int owner)
    {
        for (int w = 0; w < WORKERS; w++)
        {
            deliver(w < 3 ? s1 : s2, contribution(w, collective, op, owner), FIRST_WORKER_PEER + w);
        }
        final List<CaptureTransport.Sent> up1 = s1Transport.drain();
        final List<CaptureTransport.Sent> up2 = s2Transport.drain();
        assertThat(up1).extracting(CaptureTransport.Sent::peer).containsExactly(PS);
        assertThat(up2).extracting(CaptureTransport.Sent::peer).containsExactly(PS);
        deliver(server, up1.getFirst().bytes(), S1);
        deliver(server, up2.getFirst().bytes(), S2);
        return psTransport.drain();
    }

    /** What each worker's peer received, as bytes, from the server directly or relayed by its switch. */
    private Map<Integer, byte[]> resultsAtWorkers(final List<CaptureTransport.Sent> fromServer)
    {
        final Map<Integer, byte[]> atWorkers = new HashMap<>();
        for (final CaptureTransport.Sent sent : fromServer)
        {
            if (sent.peer() >= FIRST_WORKER_PEER)
            {
                assertThat(atWorkers.put(sent.peer(), sent.bytes())).isNull();
                continue;
            }
            deliver(sent.peer() == S1 ? s1 : s2, sent.bytes(), PS);
            for (final CaptureTransport.Sent relayed : (sent.peer() == S1 ? s1Transport : s2Transport).drain())
            {
                assertThat(atWorkers.put(relayed.peer(), relayed.bytes())).isNull();
            }
        }
        return atWorkers;
    }

    @Test
    void shouldSendOneResultPerFirstLevelSwitchThatAsksAndOnePerWorkerOtherwise()
    {
        start(true, true);
        assertThat(roundToTheServer(COLLECTIVE_ALL_REDUCE, OP_SUM, 0)).as("one RESULT per first-level switch")
            .extracting(CaptureTransport.Sent::peer).containsExactlyInAnyOrder(S1, S2);
        assertThat(server.counter(ServerCounter.RESULTS_TO_SUBTREES)).isEqualTo(2);
        assertThat(server.counter(ServerCounter.RESULTS_SENT)).isZero();

        start(false, false);
        assertThat(roundToTheServer(COLLECTIVE_ALL_REDUCE, OP_SUM, 0)).as("the flag clear: one RESULT per worker")
            .extracting(CaptureTransport.Sent::peer).containsExactlyInAnyOrder(10, 11, 12, 13, 14, 15);
        assertThat(server.counter(ServerCounter.RESULTS_TO_SUBTREES)).isZero();
        assertThat(server.counter(ServerCounter.RESULTS_SENT)).isEqualTo(6);

        start(true, false);
        assertThat(roundToTheServer(COLLECTIVE_ALL_REDUCE, OP_SUM, 0)).as("S1 asks, S2 does not")
            .extracting(CaptureTransport.Sent::peer).containsExactlyInAnyOrder(S1, 13, 14, 15);
    }

    @Test
    void shouldMarkThePartialOnlyWhenAskedAndLeaveItsBytesOtherwiseUnchanged()
    {
        start(true, false);
        for (int w = 0; w < WORKERS; w++)
        {
            deliver(w < 3 ? s1 : s2, contribution(w, COLLECTIVE_ALL_REDUCE, OP_SUM, 0), FIRST_WORKER_PEER + w);
        }
        final byte[] marked = s1Transport.drain().getFirst().bytes();
        final byte[] plain = s2Transport.drain().getFirst().bytes();
        assertThat(InaggHeader.flags(MemorySegment.ofArray(marked), 0))
            .isEqualTo(InaggHeader.FLAG_INT32 | EsaWire.FLAG_RESULTS_DOWN);
        assertThat(InaggHeader.flags(MemorySegment.ofArray(plain), 0)).as("as the P4 programs' PARTIAL")
            .isEqualTo(InaggHeader.FLAG_INT32);
    }

    /** Collective (0 ALL_REDUCE, 1 REDUCE_SCATTER, 2 ALL_GATHER), op (0 SUM, 1 MIN, 2 MAX), Owner on S1 or S2. */
    @ParameterizedTest(name = "collective {0} op {1} owner {2}")
    @CsvSource({"0,0,0", "0,1,0", "0,2,0", "1,0,4", "1,0,1", "2,0,1", "2,0,5"})
    void shouldGiveEveryWorkerTheBytesTheServerWouldHaveSentItDirectly(final int collective, final int op,
        final int owner)
    {
        start(false, false);
        final Map<Integer, byte[]> direct = resultsAtWorkers(roundToTheServer(collective, op, owner));
        start(true, true);
        final List<CaptureTransport.Sent> fromServer = roundToTheServer(collective, op, owner);
        assertThat(fromServer).hasSize(2);
        if (collective == COLLECTIVE_REDUCE_SCATTER)
        {
            for (final CaptureTransport.Sent sent : fromServer)
            {
                assertThat(InaggHeader.elementCount(sent.segment(), 0))
                    .as("lanes only to the switch of the Owner").isEqualTo((sent.peer() == S1) == owner < 3
                        ? LANES.length : 0);
            }
        }
        final Map<Integer, byte[]> relayed = resultsAtWorkers(fromServer);

        assertThat(relayed.keySet()).containsExactlyInAnyOrderElementsOf(direct.keySet()).hasSize(WORKERS);
        for (final int peer : direct.keySet())
        {
            assertThat(relayed.get(peer)).as("worker at peer %d", peer).isEqualTo(direct.get(peer));
        }
        assertThat(s1.counter(SwitchCounter.RESULTS_RELAYED)).isEqualTo(1);
        assertThat(s2.counter(SwitchCounter.RESULTS_RELAYED)).isEqualTo(1);
        assertThat(s1.counter(SwitchCounter.RESULTS_SENT)).isEqualTo(3);
    }

    @Test
    void shouldLetTheServerAnswerARetransmissionWhenItsResultToTheSwitchIsLost()
    {
        start(false, false);
        final Map<Integer, byte[]> direct = resultsAtWorkers(roundToTheServer(COLLECTIVE_ALL_REDUCE, OP_SUM, 0));
        start(true, true);
        assertThat(roundToTheServer(COLLECTIVE_ALL_REDUCE, OP_SUM, 0)).hasSize(2);   // both lost on their way down

        final byte[] again = contribution(1, COLLECTIVE_ALL_REDUCE, OP_SUM, 0);
        InaggHeader.setFlags(MemorySegment.ofArray(again), 0,
            InaggHeader.flags(MemorySegment.ofArray(again), 0) | InaggHeader.FLAG_RETRANSMIT);
        deliver(s1, again, FIRST_WORKER_PEER + 1);
        final List<CaptureTransport.Sent> up = s1Transport.drain();
        assertThat(up).extracting(CaptureTransport.Sent::peer).containsExactly(PS);
        assertThat(up.getFirst().type()).as("raw, as today").isEqualTo(MessageType.AGGREGATE);
        assertThat(up.getFirst().status()).isEqualTo(EsaWire.REASON_RETRANSMIT);
        deliver(server, up.getFirst().bytes(), S1);

        final List<CaptureTransport.Sent> answer = psTransport.drain();
        assertThat(answer).extracting(CaptureTransport.Sent::peer).as("straight to the worker")
            .containsExactly(FIRST_WORKER_PEER + 1);
        assertThat(answer.getFirst().bytes()).isEqualTo(direct.get(FIRST_WORKER_PEER + 1));
        assertThat(server.counter(ServerCounter.RETRANSMIT_REPLIES)).isEqualTo(1);
    }

    @Test
    void shouldRelayOnlyTheResultsOfItsServerOfTheJobsSessionAndOnlyWhenItAsked()
    {
        start(true, false);
        final List<CaptureTransport.Sent> fromServer = roundToTheServer(COLLECTIVE_ALL_REDUCE, OP_SUM, 0);
        final byte[] result = fromServer.stream().filter(s -> s.peer() == S1).findFirst().orElseThrow().bytes();

        deliver(s1, result, S2);
        assertThat(s1Transport.drain()).as("from a peer that is not the job's server").isEmpty();
        assertThat(s1.counter(SwitchCounter.DROP_SOURCE_MISMATCH)).isEqualTo(1);

        final byte[] otherSession = result.clone();
        InaggHeader.setSession(MemorySegment.ofArray(otherSession), 0, 3);
        deliver(s1, otherSession, PS);
        assertThat(s1Transport.drain()).as("of another session, unanswered").isEmpty();
        assertThat(s1.counter(SwitchCounter.DROP_STALE_SESSION)).isEqualTo(1);

        deliver(s2, result, PS);
        assertThat(s2Transport.drain()).as("a switch that did not ask takes no RESULT").isEmpty();
        assertThat(s2.counter(SwitchCounter.DROP_MALFORMED)).isEqualTo(1);

        deliver(s1, result, PS);
        final List<CaptureTransport.Sent> relayed = s1Transport.drain();
        assertThat(relayed).extracting(CaptureTransport.Sent::peer).as("to the local workers only")
            .containsExactly(10, 11, 12);
        final List<Integer> workerIds = new ArrayList<>();
        for (final CaptureTransport.Sent copy : relayed)
        {
            workerIds.add(InaggHeader.workerId(copy.segment(), 0));
        }
        assertThat(workerIds).containsExactly(0, 1, 2);
        assertThat(s1.counter(SwitchCounter.RESULTS_RELAYED)).isEqualTo(1);
    }

    @Test
    void shouldCountAResultAsMalformedAtASwitchWithNoJobThatRelays()
    {
        start(false, false);
        final byte[] result = roundToTheServer(COLLECTIVE_ALL_REDUCE, OP_SUM, 0).getFirst().bytes();
        deliver(s1, result, PS);
        assertThat(s1Transport.drain()).isEmpty();
        assertThat(s1.counter(SwitchCounter.DROP_MALFORMED)).isEqualTo(1);
        assertThat(s1.counter(SwitchCounter.DROP_UNKNOWN_JOB)).isZero();
    }

    /**
     * The server's sends to the switches and the switches' relays to their workers allocate nothing per round once
     * warm: rounds of flagged PARTIALs (built in place) go into a server over in-process endpoints, its RESULTs into
     * S1 and S2, their copies into the workers' endpoints, all on this thread, in windows of {@code ROUNDS} rounds. A
     * per-packet allocation is in every window; the JIT's own (a window with a compilation) is in some, so three clean
     * windows in a row must come within 60.
     */
    @Test
    void shouldAllocateNothingPerRoundToSendResultsDownAndRelayThem()
    {
        final InProcessNetwork network = new InProcessNetwork(FIRST_WORKER_PEER + WORKERS, 1 << 20, 2048);
        final CounterRegistry registry = new CounterRegistry(256);
        final SwitchJobConfig config = new SwitchJobConfig(JOB, WORKERS, 8, LANES.length,
            SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP, workerPeers());
        final Transport s1End = network.endpoint(S1);
        final Transport s2End = network.endpoint(S2);
        final Transport psEnd = network.endpoint(PS);
        final Transport[] workerEnds = new Transport[WORKERS];
        for (int w = 0; w < WORKERS; w++)
        {
            workerEnds[w] = network.endpoint(FIRST_WORKER_PEER + w);
        }
        final SoftwareSwitch relay1 = new SoftwareSwitch(s1End, registry, 16);
        final SoftwareSwitch relay2 = new SoftwareSwitch(s2End, registry, 16);
        relay1.addJob(config, new UpstreamAggregation(PS, new int[] {0, 1, 2}, true));
        relay2.addJob(config, new UpstreamAggregation(PS, new int[] {3, 4, 5}, true));
        relay1.doWork();
        relay2.doWork();
        final ParameterServer ps = new ParameterServer(psEnd, registry, 16, 16);
        ps.addJob(new ServerJobConfig(JOB, WORKERS, workerPeers(), S1, false, 8, LANES.length));
        ps.applyControl();
        final MemorySegment partial = Arena.ofAuto().allocate(EsaWire.partialLength(LANES.length, WORKERS));
        final int length = (int)partial.byteSize();
        final long[] received = new long[1];
        final MessageHandler worker = (m, o, n, peer) -> received[0]++;
        final int[] sequence = {0};
        final Runnable rounds = () ->
        {
            for (int r = 0; r < ROUNDS; r++)
            {
                final int seq = sequence[0]++;
                for (int sw = S1; sw <= S2; sw++)
                {
                    EsaWire.writePartialHeader(partial, 0, InaggHeader.FLAG_INT32 | EsaWire.FLAG_RESULTS_DOWN, JOB, 0,
                        ((seq >>> 3) & 1) << 15 | (seq & 7), seq, LANES.length, 1, 0, InaggHeader.NO_EXPONENT, 0,
                        EsaWire.REASON_SUBTREE);
                    for (int k = 0; k < LANES.length; k++)
                    {
                        InaggHeader.setElement(partial, 0, k, LANES[k] + seq);
                    }
                    EsaWire.setPartialBitmapWord(partial, 0, LANES.length, 0, sw == S1 ? 0b000111 : 0b111000);
                    ps.onMessage(partial, 0, length, sw);
                }
                s1End.poll(relay1, 16);
                s2End.poll(relay2, 16);
                for (final Transport end : workerEnds)
                {
                    end.poll(worker, 16);
                }
            }
        };
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final long self = Thread.currentThread().threadId();
        for (int i = 0; i < 20; i++)
        {
            rounds.run();
        }
        final List<Long> windows = new ArrayList<>();
        while (windows.size() < 60 && !(windows.size() >= 3
            && windows.subList(windows.size() - 3, windows.size()).stream().allMatch(bytes -> bytes == 0)))
        {
            final long before = threads.getThreadAllocatedBytes(self);
            rounds.run();
            windows.add(threads.getThreadAllocatedBytes(self) - before);
        }
        assertThat(windows.subList(windows.size() - 3, windows.size()))
            .as("bytes allocated per window of %d rounds (all windows: %s)", ROUNDS, windows).containsOnly(0L);
        assertThat(received[0]).as("every worker got every round's result").isEqualTo((long)WORKERS * sequence[0]);
        assertThat(ps.counter(ServerCounter.RESULTS_TO_SUBTREES)).isEqualTo(2L * sequence[0]);
        assertThat(relay1.counter(SwitchCounter.RESULTS_RELAYED)).isEqualTo(sequence[0]);
    }
}
