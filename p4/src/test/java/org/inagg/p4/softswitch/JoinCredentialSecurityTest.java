package org.inagg.p4.softswitch;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SystemNanoClock;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerSettings;
import org.inagg.transport.InProcessNetwork;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.WireCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 24, the switch: one forged JOIN from a registered worker's address (a spoofed IPv4 source and UDP port) with a
 * new incarnation used to reset a running job's session. With the JOIN credential the controller installs per worker,
 * such a JOIN is dropped unanswered and counted, and the session, slots and the worker's incarnation stay as they were;
 * the worker itself, showing its credential, still restarts the job in place.
 */
@Timeout(30)
class JoinCredentialSecurityTest
{
    private static final int JOB = 9;
    private static final long CREDENTIAL_0 = 0x0123_4567_89AB_CDEFL;
    private static final long CREDENTIAL_1 = 0xFEDC_BA98_7654_3210L;
    private static final int PEER_0 = 10;
    private static final int PEER_1 = 11;

    static byte[] join(final int job, final int worker, final int workers, final long incarnation,
        final long credential)
    {
        final byte[] bytes = new byte[InaggHeader.joinLength(credential)];
        InaggHeader.writeJoin(MemorySegment.ofArray(bytes), 0, job, worker, workers, InaggHeader.ANY_SESSION,
            incarnation, credential);
        return bytes;
    }

    private static byte[] aggregate(final int worker, final int session, final int... lanes)
    {
        final byte[] bytes = CaptureTransport.aggregate(JOB, worker, 0, 0, 0, lanes);
        InaggHeader.setSession(MemorySegment.ofArray(bytes), 0, session);
        return bytes;
    }

    private static SoftwareSwitch switchWithCredentials(final CaptureTransport transport)
    {
        final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, 2, 8, 4, SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP,
            new int[] {PEER_0, PEER_1}, 0, new long[] {CREDENTIAL_0, CREDENTIAL_1}));
        sw.doWork();
        return sw;
    }

    @Test
    void shouldCarryTheCredentialInTwoLanesOfAWellFormedJoin()
    {
        final byte[] bytes = join(JOB, 1, 2, 0xB, CREDENTIAL_1);
        final MemorySegment m = MemorySegment.ofArray(bytes);
        assertThat(bytes).hasSize(InaggHeader.LENGTH + 8);
        assertThat(InaggHeader.check(m, 0, bytes.length)).isEqualTo(WireCheck.OK);
        assertThat(InaggHeader.elementCount(m, 0)).isEqualTo(InaggHeader.JOIN_CREDENTIAL_LANES);
        assertThat(InaggHeader.element(m, 0, 0)).isEqualTo(0xFEDC_BA98);
        assertThat(InaggHeader.element(m, 0, 1)).isEqualTo(0x7654_3210);
        assertThat(InaggHeader.joinCredential(m, 0)).isEqualTo(CREDENTIAL_1);
        assertThat(InaggHeader.joinIncarnation(m, 0)).isEqualTo(0xB);
        final byte[] none = join(JOB, 1, 2, 0xB, InaggHeader.NO_CREDENTIAL);
        assertThat(none).hasSize(InaggHeader.LENGTH);
        assertThat(InaggHeader.joinCredential(MemorySegment.ofArray(none), 0)).isEqualTo(InaggHeader.NO_CREDENTIAL);
    }

    @Test
    void shouldNotLetAForgedJoinFromARegisteredAddressWithANewIncarnationStartASession()
    {
        final CaptureTransport transport = new CaptureTransport();
        final SoftwareSwitch sw = switchWithCredentials(transport);
        CaptureTransport.deliver(sw, join(JOB, 0, 2, 0xA, CREDENTIAL_0), PEER_0);
        CaptureTransport.deliver(sw, join(JOB, 1, 2, 0xB, CREDENTIAL_1), PEER_1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::type)
            .containsExactly(MessageType.JOIN_ACK, MessageType.JOIN_ACK);
        CaptureTransport.deliver(sw, aggregate(0, 0, 1, 2, 3, 4), PEER_0);

        // the attacker spoofs worker 1's address: no credential, a wrong one, worker 0's, the high or low half only
        for (final long forged : new long[] {InaggHeader.NO_CREDENTIAL, 0xBAD, CREDENTIAL_0,
            CREDENTIAL_1 & 0xFFFF_FFFF_0000_0000L, CREDENTIAL_1 & 0xFFFF_FFFFL})
        {
            CaptureTransport.deliver(sw, join(JOB, 1, 2, 0xE71L, forged), PEER_1);
        }
        assertThat(transport.drain()).as("no answer to a forged JOIN").isEmpty();
        assertThat(sw.counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isEqualTo(5);
        assertThat(sw.session(JOB)).as("the session is unchanged").isZero();
        assertThat(sw.gauge(SwitchGauge.SESSIONS_STARTED)).isZero();
        assertThat(sw.counter(SwitchCounter.JOINS)).isEqualTo(2);
        assertThat(sw.counter(SwitchCounter.REJECTS)).isZero();

        // the running round was not reset: worker 1's contribution completes it with worker 0's lanes
        CaptureTransport.deliver(sw, aggregate(1, 0, 10, 20, 30, 40), PEER_1);
        final List<CaptureTransport.Sent> results = transport.drain();
        assertThat(results).hasSize(2).allSatisfy(s -> assertThat(s.lanes()).containsExactly(11, 22, 33, 44));

        // worker 1's own incarnation is still the one it joined with: its repeated JOIN changes nothing
        CaptureTransport.deliver(sw, join(JOB, 1, 2, 0xB, CREDENTIAL_1), PEER_1);
        assertThat(InaggHeader.joinAckSession(transport.drain().getFirst().segment(), 0)).isZero();
        assertThat(sw.session(JOB)).isZero();
    }

    @Test
    void shouldStillRestartInPlaceWhenTheWorkerShowsItsCredential()
    {
        final CaptureTransport transport = new CaptureTransport();
        final SoftwareSwitch sw = switchWithCredentials(transport);
        CaptureTransport.deliver(sw, join(JOB, 0, 2, 0xA, CREDENTIAL_0), PEER_0);
        CaptureTransport.deliver(sw, join(JOB, 1, 2, 0xB, CREDENTIAL_1), PEER_1);
        CaptureTransport.deliver(sw, aggregate(0, 0, 100, 100, 100, 100), PEER_0);
        transport.drain();

        CaptureTransport.deliver(sw, join(JOB, 1, 2, 0xBB, CREDENTIAL_1), PEER_1);
        final List<CaptureTransport.Sent> ack = transport.drain();
        assertThat(ack).hasSize(1);
        assertThat(ack.getFirst().type()).isEqualTo(MessageType.JOIN_ACK);
        assertThat(InaggHeader.joinAckSession(ack.getFirst().segment(), 0)).as("a new session").isEqualTo(1);
        assertThat(sw.gauge(SwitchGauge.SESSIONS_STARTED)).isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isZero();

        CaptureTransport.deliver(sw, join(JOB, 0, 2, 0xAA, CREDENTIAL_0), PEER_0);
        transport.drain();
        CaptureTransport.deliver(sw, aggregate(0, 1, 1, 2, 3, 4), PEER_0);
        CaptureTransport.deliver(sw, aggregate(1, 1, 10, 20, 30, 40), PEER_1);
        assertThat(transport.drain()).as("only the new run's lanes").hasSize(2)
            .allSatisfy(s -> assertThat(s.lanes()).containsExactly(11, 22, 33, 44));
    }

    @Test
    void shouldNotLetAnOpenJobsSquatterTakeAWorkerIdThatHasACredential()
    {
        // open mode (no registered sources), but credentials: a stranger cannot move worker 0 to its own address
        final CaptureTransport transport = new CaptureTransport();
        final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, 2, 8, 4).withJoinCredentials(new long[] {CREDENTIAL_0, CREDENTIAL_1}));
        sw.doWork();
        CaptureTransport.deliver(sw, join(JOB, 0, 2, 0xA, CREDENTIAL_0), PEER_0);
        CaptureTransport.deliver(sw, join(JOB, 0, 2, 0x5, 0x5), 66);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::peer).containsExactly(PEER_0);
        assertThat(sw.counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isEqualTo(1);
        CaptureTransport.deliver(sw, join(JOB, 1, 2, 0xB, CREDENTIAL_1), PEER_1);
        CaptureTransport.deliver(sw, aggregate(0, 0, 1, 1, 1, 1), PEER_0);
        CaptureTransport.deliver(sw, aggregate(1, 0, 1, 1, 1, 1), PEER_1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::peer)
            .as("the results go to worker 0's own address").contains(PEER_0, PEER_1).doesNotContain(66);
    }

    @Test
    void shouldAcceptJoinsWithOrWithoutACredentialForAJobInstalledWithoutOne()
    {
        // a job the operator installed without the controller (--source, lab, --open): no credential required
        final CaptureTransport transport = new CaptureTransport();
        final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, 2, 8, 4, SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP,
            new int[] {PEER_0, PEER_1}));
        sw.doWork();
        CaptureTransport.deliver(sw, join(JOB, 0, 2, 0xA, InaggHeader.NO_CREDENTIAL), PEER_0);
        CaptureTransport.deliver(sw, join(JOB, 1, 2, 0xB, CREDENTIAL_1), PEER_1);
        assertThat(transport.drain()).extracting(CaptureTransport.Sent::type)
            .containsExactly(MessageType.JOIN_ACK, MessageType.JOIN_ACK);
        assertThat(sw.counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isZero();
    }

    @Test
    void shouldAllReduceExactlyWithWorkersShowingTheirCredentialsAndRefuseOneWithout() throws Exception
    {
        final int workers = 2;
        final int elements = 4_000;
        final InProcessNetwork network = new InProcessNetwork(1 + workers + 1, 1 << 20, 2048);
        final CounterRegistry registry = new CounterRegistry(256);
        final SoftwareSwitch sw = new SoftwareSwitch(network.endpoint(0), registry, 64);
        final long[] credentials = {CREDENTIAL_0, CREDENTIAL_1};
        sw.addJob(new SwitchJobConfig(JOB, workers, 16, 64).withJoinCredentials(credentials));
        final List<Agent> agents = new ArrayList<>(List.of(sw));
        final List<WorkerAgent> workerAgents = new ArrayList<>();
        final List<AllReduceOperation> ops = new ArrayList<>();
        final List<MemorySegment> outs = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            final WorkerAgent agent = new WorkerAgent(new WorkerSettings(JOB, w, workers, 0, 0, 1_000_000L,
                TimeUnit.SECONDS.toNanos(5), 5_000_000L, 64).withJoinCredential(credentials[w]),
                network.endpoint(1 + w), FixedPointConverter.best(), SystemNanoClock.INSTANCE, registry, 4);
            final MemorySegment in = Arena.ofAuto().allocate((long)elements * Integer.BYTES);
            final MemorySegment out = Arena.ofAuto().allocate((long)elements * Integer.BYTES);
            for (int k = 0; k < elements; k++)
            {
                in.setAtIndex(ValueLayout.JAVA_INT, k, k * (w + 1));
            }
            final AllReduceOperation op = new AllReduceOperation(in, out, elements, false);
            assertThat(agent.submit(op)).isTrue();
            agent.onStart();
            workerAgents.add(agent);
            ops.add(op);
            outs.add(out);
            agents.add(agent);
        }
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!ops.stream().allMatch(op -> op.completion().isDone()) && System.nanoTime() - deadline < 0)
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
        for (int w = 0; w < workers; w++)
        {
            assertThat(ops.get(w).completion()).isCompleted();
            for (int k = 0; k < elements; k += 97)
            {
                assertThat(outs.get(w).getAtIndex(ValueLayout.JAVA_INT, k)).isEqualTo(3 * k);
            }
        }
        assertThat(sw.counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isZero();

        // a worker without its credential (a stale launcher, or a stranger) never joins: it is dropped, counted
        final WorkerAgent intruder = new WorkerAgent(new WorkerSettings(JOB, 1, workers, 0, 0, 1_000_000L,
            TimeUnit.MILLISECONDS.toNanos(300), 5_000_000L, 64), network.endpoint(1 + workers),
            FixedPointConverter.best(), SystemNanoClock.INSTANCE, registry, 4);
        intruder.onStart();
        final long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!intruder.joined().isDone() && System.nanoTime() - bound < 0)
        {
            intruder.doWork();
            sw.doWork();
        }
        assertThat(intruder.joined()).as("fails after its join timeout, never joined").isCompletedExceptionally();
        assertThat(sw.counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isPositive();
        assertThat(sw.session(JOB)).isZero();
        assertThat(workerAgents).hasSize(workers);
    }
}
