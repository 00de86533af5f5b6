package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SystemNanoClock;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerSettings;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two-level aggregation ({@link UpstreamAggregation}): switch S1 sums workers 0-3, switch S2 workers 4-5, workers 6-7
 * send straight to the parameter server, which adds the two PARTIALs and the two raw contributions and answers all
 * eight workers. Packet rules first, then the real {@link WorkerAgent}s end to end with and without faults.
 */
class TwoLevelAggregationTest
{
    private static final int JOB = 3;
    private static final int SESSION = 9;
    private static final int WORKERS = 8;
    private static final int LANES = 64;
    private static final int S1 = 0;
    private static final int S2 = 1;
    private static final int PS = 2;
    private static final int FIRST_WORKER_PEER = 3;
    private static final int[] S1_WORKERS = {0, 1, 2, 3};
    private static final int[] S2_WORKERS = {4, 5};

    private static int[] workerPeers()
    {
        final int[] peers = new int[WORKERS];
        for (int w = 0; w < WORKERS; w++)
        {
            peers[w] = FIRST_WORKER_PEER + w;
        }
        return peers;
    }

    private static int sendsTo(final int worker)
    {
        return worker < 4 ? S1 : worker < 6 ? S2 : PS;
    }

    @Test
    void shouldSendTheLocalSumUpstreamAsAPartialWithTheLocalBitmapOnceEveryLocalWorkerContributed()
    {
        final CaptureTransport transport = new CaptureTransport();
        final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, WORKERS, 8, 4, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, workerPeers(), SESSION), new UpstreamAggregation(PS, S2_WORKERS));
        sw.doWork();

        CaptureTransport.deliver(sw, CaptureTransport.aggregateOfSession(JOB, SESSION, 4, 12, 0, 1, 2, 3, 4),
            FIRST_WORKER_PEER + 4);
        assertThat(transport.sent).isEmpty();
        CaptureTransport.deliver(sw, CaptureTransport.aggregateOfSession(JOB, SESSION, 5, 12, 0, 10, 20, 30, 40),
            FIRST_WORKER_PEER + 5);

        assertThat(transport.sent).hasSize(1);
        final CaptureTransport.Sent partial = transport.sent.getFirst();
        final MemorySegment m = partial.segment();
        assertThat(partial.peer()).as("to the parameter server, not to the workers").isEqualTo(PS);
        assertThat(partial.type()).isEqualTo(EsaWire.TYPE_PARTIAL);
        assertThat(partial.status()).isEqualTo(EsaWire.REASON_SUBTREE);
        assertThat(InaggHeader.session(m, 0)).as("the job's session").isEqualTo(SESSION);
        assertThat(InaggHeader.sequence(m, 0)).isEqualTo(12);
        assertThat(EsaWire.partialBitmapWords(m, 0)).isEqualTo(1);
        assertThat(EsaWire.partialBitmapWord(m, 0, 0)).isEqualTo(0b11_0000);
        assertThat(CaptureTransport.partialLanes(partial)).containsExactly(11, 22, 33, 44);
        assertThat(sw.counter(SwitchCounter.UPSTREAM_PARTIALS)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.RESULTS_SENT)).isZero();

        // A retransmission of the completed round is the server's to answer: forwarded raw.
        transport.sent.clear();
        CaptureTransport.deliver(sw, CaptureTransport.aggregateOfSession(JOB, SESSION, 4, 12, 0, 1, 2, 3, 4),
            FIRST_WORKER_PEER + 4);
        assertThat(transport.sent).extracting(CaptureTransport.Sent::peer).containsExactly(PS);
        assertThat(transport.sent.getFirst().type()).isEqualTo(MessageType.AGGREGATE);
        assertThat(transport.sent.getFirst().status()).isEqualTo(EsaWire.REASON_RETRANSMIT);
        assertThat(sw.counter(SwitchCounter.UPSTREAM_FORWARDS)).isEqualTo(1);
    }

    @Test
    void shouldDropWorkersItDoesNotServeAndRejectTheirJoins()
    {
        final CaptureTransport transport = new CaptureTransport();
        final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, WORKERS, 8, 4, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, workerPeers()), new UpstreamAggregation(PS, S2_WORKERS));
        sw.doWork();

        CaptureTransport.deliver(sw, CaptureTransport.aggregate(JOB, 0, 12, 0, 0, 1, 2, 3, 4), FIRST_WORKER_PEER);
        assertThat(transport.sent).isEmpty();
        assertThat(sw.counter(SwitchCounter.DROP_UNKNOWN_WORKER)).isEqualTo(1);

        CaptureTransport.deliver(sw, join(0), FIRST_WORKER_PEER);
        assertThat(transport.sent).hasSize(1);
        assertThat(transport.sent.getFirst().type()).isEqualTo(MessageType.REJECT);
        assertThat(transport.sent.getFirst().status()).isEqualTo(RejectReason.WORKER_ID_OUT_OF_RANGE);
    }

    @Test
    void shouldRefuseLocalWorkersOutsideTheJob()
    {
        final SoftwareSwitch sw = new SoftwareSwitch(new CaptureTransport(), new CounterRegistry(64), 16);
        final SwitchJobConfig config = new SwitchJobConfig(JOB, 4, 8, 4);
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
            .isThrownBy(() -> sw.addJob(config, new UpstreamAggregation(PS, new int[] {2, 4})))
            .withMessageContaining("local worker 4 is not a worker id of a job of 4 workers");
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
            .isThrownBy(() -> new UpstreamAggregation(PS, new int[] {1, 1}))
            .withMessageContaining("distinct");
    }

    @Test
    void shouldAnswerJoinsOfDirectWorkersAtTheServerAndNotFromForeignPeers()
    {
        final CaptureTransport transport = new CaptureTransport();
        final ParameterServer server = new ParameterServer(transport, new CounterRegistry(64), 16, 64);
        server.addJob(new ServerJobConfig(JOB, WORKERS, workerPeers(), S1, false, 8, LANES));
        server.applyControl();

        CaptureTransport.deliver(server, join(6), FIRST_WORKER_PEER + 6);
        CaptureTransport.deliver(server, join(7), 99);
        assertThat(transport.sent).hasSize(1);
        final MemorySegment ack = transport.sent.getFirst().segment();
        assertThat(InaggHeader.type(ack, 0)).isEqualTo(MessageType.JOIN_ACK);
        assertThat(InaggHeader.sequence(ack, 0)).isEqualTo(WORKERS);
        assertThat(InaggHeader.slotIndex(ack, 0)).isEqualTo(8);
        assertThat(InaggHeader.joinLanes(ack, 0)).isEqualTo(LANES);
        assertThat(server.counter(ServerCounter.JOINS)).isEqualTo(1);
    }

    @ParameterizedTest(name = "faults {0}, results down the tree {1}")
    @CsvSource({"0.0, false", "0.05, false", "0.0, true", "0.05, true"})
    @Timeout(120)
    void shouldAllReduceExactlyAcrossTwoSwitchesAndTheServer(final double faults, final boolean resultsDown)
    {
        final int floats = 5_000;
        final int ints = 3_001;
        final InProcessNetwork network = new InProcessNetwork(FIRST_WORKER_PEER + WORKERS, 1 << 21, 2048);
        final CounterRegistry registry = new CounterRegistry(512);
        final List<Agent> agents = new ArrayList<>();
        final SoftwareSwitch s1 = new SoftwareSwitch(endpoint(network, S1, faults), registry, 64);
        final SoftwareSwitch s2 = new SoftwareSwitch(endpoint(network, S2, faults), registry, 64);
        final ParameterServer server = new ParameterServer(endpoint(network, PS, faults), registry, 64, 1 << 12);
        final SwitchJobConfig config = new SwitchJobConfig(JOB, WORKERS, 8, LANES, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, workerPeers());
        s1.addJob(config, new UpstreamAggregation(PS, S1_WORKERS, resultsDown));
        s2.addJob(config, new UpstreamAggregation(PS, S2_WORKERS, resultsDown));
        server.addJob(new ServerJobConfig(JOB, WORKERS, workerPeers(), S1, false, 8, LANES));
        agents.add(s1);
        agents.add(s2);
        agents.add(server);

        final List<AllReduceOperation[]> operations = new ArrayList<>();
        final List<MemorySegment[]> outputs = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            final WorkerAgent agent = new WorkerAgent(
                new WorkerSettings(JOB, w, WORKERS, sendsTo(w), 0, 1_000_000L, 60_000_000_000L, 20_000_000L, 64),
                endpoint(network, FIRST_WORKER_PEER + w, faults), FixedPointConverter.best(),
                SystemNanoClock.INSTANCE, registry, 16);
            final MemorySegment fin = Arena.ofAuto().allocate((long)floats * Float.BYTES);
            final MemorySegment fout = Arena.ofAuto().allocate((long)floats * Float.BYTES);
            final MemorySegment iin = Arena.ofAuto().allocate((long)ints * Integer.BYTES);
            final MemorySegment iout = Arena.ofAuto().allocate((long)ints * Integer.BYTES);
            for (int k = 0; k < floats; k++)
            {
                fin.setAtIndex(ValueLayout.JAVA_FLOAT, k, floatValue(w, k));
            }
            for (int k = 0; k < ints; k++)
            {
                iin.setAtIndex(ValueLayout.JAVA_INT, k, intValue(w, k));
            }
            final AllReduceOperation f = new AllReduceOperation(fin, fout, floats, true);
            final AllReduceOperation i = new AllReduceOperation(iin, iout, ints, false);
            assertThat(agent.submit(f)).isTrue();
            assertThat(agent.submit(i)).isTrue();
            agent.onStart();
            agents.add(agent);
            operations.add(new AllReduceOperation[] {f, i});
            outputs.add(new MemorySegment[] {fout, iout});
        }
        while (!operations.stream().allMatch(o -> o[0].completion().isDone() && o[1].completion().isDone()))
        {
            for (final Agent agent : agents)
            {
                try
                {
                    agent.doWork();
                }
                catch (final Exception e)
                {
                    throw new AssertionError(e);
                }
            }
        }

        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(operations.get(w)[0].completion()).isCompleted();
            assertThat(operations.get(w)[1].completion()).isCompleted();
            for (int k = 0; k < floats; k++)
            {
                float expected = 0;
                for (int v = 0; v < WORKERS; v++)
                {
                    expected += floatValue(v, k);
                }
                assertThat(outputs.get(w)[0].getAtIndex(ValueLayout.JAVA_FLOAT, k)).as("worker %d float %d", w, k)
                    .isEqualTo(expected);
            }
            for (int k = 0; k < ints; k++)
            {
                int expected = 0;
                for (int v = 0; v < WORKERS; v++)
                {
                    expected += intValue(v, k);
                }
                assertThat(outputs.get(w)[1].getAtIndex(ValueLayout.JAVA_INT, k)).as("worker %d int %d", w, k)
                    .isEqualTo(expected);
            }
        }
        assertThat(s1.counter(SwitchCounter.UPSTREAM_PARTIALS)).isPositive();
        assertThat(s2.counter(SwitchCounter.UPSTREAM_PARTIALS)).isPositive();
        assertThat(s1.counter(SwitchCounter.RESULTS_SENT)).as("results from the server, or relayed by S1")
            .isEqualTo(resultsDown ? 4 * s1.counter(SwitchCounter.RESULTS_RELAYED) : 0);
        assertThat(server.counter(ServerCounter.RESULTS_TO_SUBTREES) > 0).isEqualTo(resultsDown);
        assertThat(server.counter(ServerCounter.PARTIALS_MERGED)).isPositive();
        assertThat(server.counter(ServerCounter.RAW_MERGED)).as("workers 6 and 7 send raw").isPositive();
        assertThat(server.counter(ServerCounter.JOINS)).isGreaterThanOrEqualTo(2);
        assertThat(server.openBlocks(JOB)).isZero();
    }

    private static Transport endpoint(final InProcessNetwork network, final int peer, final double faults)
    {
        final Transport endpoint = network.endpoint(peer);
        return faults == 0 ? endpoint : new FaultInjectingTransport(endpoint, FaultConfig.lossy(faults, 17 + peer));
    }

    private static float floatValue(final int w, final int k)
    {
        return (float)(((w * 13 + k * 7) % 201) - 100) / 4;     // multiples of 1/4: the fixed-point sum is exact
    }

    private static int intValue(final int w, final int k)
    {
        return (w * 1_000_003 + k * 7_919) % 2_000_000 - 1_000_000;
    }

    private static byte[] join(final int worker)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.write(MemorySegment.ofArray(bytes), 0, MessageType.JOIN, 0, JOB, worker, 0, 0, WORKERS, 0, 0,
            InaggHeader.NO_EXPONENT, 0);
        return bytes;
    }
}
