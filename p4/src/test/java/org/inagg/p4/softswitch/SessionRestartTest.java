package org.inagg.p4.softswitch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.p4.testing.RestartableWorkers.failureOf;
import static org.inagg.p4.testing.RestartableWorkers.runUntil;
import static org.inagg.p4.testing.RestartableWorkers.value;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.inagg.PeerTimeoutException;
import org.inagg.SessionChangedException;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.p4.testing.RestartableWorkers;
import org.inagg.p4.testing.RestartableWorkers.Worker;
import org.inagg.transport.InProcessNetwork;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Restarted jobs on the software switch (issue 12): sessions and admission. Packet rules with a capture transport,
 * then real {@link WorkerAgent}s killed (their duty cycle no longer run) and restarted (a new agent, as a new process
 * would be) on one thread, deterministic and bounded.
 */
class SessionRestartTest
{
    private static final int JOB = 7;
    private static final int SWITCH = 0;
    private static final long PEER_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(600);

    // ---- packet rules --------------------------------------------------------------------------------------------

    private static byte[] join(final int worker, final int workers, final int session, final long incarnation)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoin(MemorySegment.ofArray(bytes), 0, JOB, worker, workers, session, incarnation);
        return bytes;
    }

    private static byte[] aggregate(final int worker, final int session, final int... lanes)
    {
        final byte[] bytes = CaptureTransport.aggregate(JOB, worker, 0, 0, 0, lanes);
        InaggHeader.setSession(MemorySegment.ofArray(bytes), 0, session);
        return bytes;
    }

    @Test
    void shouldStartANewSessionWhenAJoinedWorkerRejoinsAsANewProcessAndNeverMixTheRuns()
    {
        final CaptureTransport transport = new CaptureTransport();
        final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, 2, 8, 4));
        sw.doWork();

        CaptureTransport.deliver(sw, join(0, 2, InaggHeader.ANY_SESSION, 0xA), 10);
        CaptureTransport.deliver(sw, join(1, 2, InaggHeader.ANY_SESSION, 0xB), 11);
        assertThat(transport.drain()).extracting(s -> InaggHeader.joinAckSession(s.segment(), 0)).containsExactly(0, 0);
        // worker 0 of the first run contributes, then worker 1 is restarted (another incarnation, another port)
        CaptureTransport.deliver(sw, aggregate(0, 0, 100, 100, 100, 100), 10);
        CaptureTransport.deliver(sw, join(1, 2, InaggHeader.ANY_SESSION, 0xB), 11);
        assertThat(transport.drain()).as("a repeated JOIN of the same process changes nothing")
            .extracting(s -> InaggHeader.joinAckSession(s.segment(), 0)).containsExactly(0);
        CaptureTransport.deliver(sw, join(1, 2, InaggHeader.ANY_SESSION, 0xBB), 12);
        final List<CaptureTransport.Sent> ack = transport.drain();
        assertThat(ack).hasSize(1);
        assertThat(ack.getFirst().type()).isEqualTo(MessageType.JOIN_ACK);
        assertThat(InaggHeader.joinAckSession(ack.getFirst().segment(), 0)).isEqualTo(1);

        // the old run's worker 0 goes on: its packet is dropped, counted, and answered with who restarted the job
        CaptureTransport.deliver(sw, aggregate(0, 0, 100, 100, 100, 100), 10);
        final List<CaptureTransport.Sent> stale = transport.drain();
        assertThat(stale).hasSize(1);
        assertThat(stale.getFirst().peer()).isEqualTo(10);
        assertThat(stale.getFirst().type()).isEqualTo(MessageType.REJECT);
        assertThat(stale.getFirst().status()).isEqualTo(RejectReason.STALE_SESSION);
        assertThat(InaggHeader.session(stale.getFirst().segment(), 0)).isEqualTo(1);
        assertThat(InaggHeader.sequence(stale.getFirst().segment(), 0)).as("the worker that rejoined").isEqualTo(1);
        assertThat(sw.counter(SwitchCounter.DROP_STALE_SESSION)).isEqualTo(1);
        // a JOIN naming another session is refused as stale, and so is any JOIN of a process of the earlier run
        CaptureTransport.deliver(sw, join(0, 2, 9, 0xC), 10);
        assertThat(transport.drain().getFirst().status()).isEqualTo(RejectReason.STALE_SESSION);
        CaptureTransport.deliver(sw, join(0, 2, InaggHeader.ANY_SESSION, 0xA), 10);
        assertThat(transport.drain().getFirst().status()).isEqualTo(RejectReason.STALE_SESSION);

        // the new run: worker 0 restarted too; the sum holds only the new run's lanes (the slot was reset)
        CaptureTransport.deliver(sw, join(0, 2, InaggHeader.ANY_SESSION, 0xAA), 13);
        assertThat(InaggHeader.joinAckSession(transport.drain().getFirst().segment(), 0)).as("joins session 1")
            .isEqualTo(1);
        CaptureTransport.deliver(sw, aggregate(0, 1, 1, 2, 3, 4), 13);
        CaptureTransport.deliver(sw, aggregate(1, 1, 10, 20, 30, 40), 12);
        final List<CaptureTransport.Sent> results = transport.drain();
        assertThat(results).extracting(CaptureTransport.Sent::peer).containsExactly(13, 12);
        assertThat(results.getFirst().lanes()).containsExactly(11, 22, 33, 44);
        assertThat(InaggHeader.session(results.getFirst().segment(), 0)).isEqualTo(1);
        assertThat(sw.gauge(SwitchGauge.SESSIONS_STARTED)).isEqualTo(1);
        assertThat(sw.gauge(SwitchGauge.JOBS)).isEqualTo(1);
        assertThat(sw.gauge(SwitchGauge.SLOTS)).isEqualTo(8);
    }

    @Test
    void shouldNotLetAnyoneButTheRegisteredSourceJoinRestartOrFeedAJob()
    {
        final CaptureTransport transport = new CaptureTransport();
        final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, 2, 8, 4, SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP,
            new int[] {10, 11}, 5));
        sw.doWork();

        CaptureTransport.deliver(sw, join(0, 2, InaggHeader.ANY_SESSION, 1), 66);
        CaptureTransport.deliver(sw, aggregate(0, 5, 9, 9, 9, 9), 66);
        assertThat(transport.drain()).as("a squatter gets no answer").isEmpty();
        assertThat(sw.counter(SwitchCounter.DROP_SOURCE_MISMATCH)).isEqualTo(2);

        CaptureTransport.deliver(sw, join(0, 2, InaggHeader.ANY_SESSION, 2), 10);
        assertThat(InaggHeader.joinAckSession(transport.drain().getFirst().segment(), 0))
            .as("the control plane's session").isEqualTo(5);
        CaptureTransport.deliver(sw, aggregate(0, 5, 1, 1, 1, 1), 10);
        CaptureTransport.deliver(sw, aggregate(1, 5, 2, 2, 2, 2), 11);
        assertThat(transport.drain()).hasSize(2).allSatisfy(s -> assertThat(s.lanes()).containsExactly(3, 3, 3, 3));

        // the control plane starts session 6 (the job installed again): session 5's packets are stale
        sw.addJob(new SwitchJobConfig(JOB, 2, 8, 4, SwitchJobConfig.NO_SLOT_BASE, SwitchJobConfig.NO_MULTICAST_GROUP,
            new int[] {10, 11}, 6));
        sw.doWork();
        CaptureTransport.deliver(sw, aggregate(0, 5, 1, 1, 1, 1), 10);
        final CaptureTransport.Sent reject = transport.drain().getFirst();
        assertThat(reject.status()).isEqualTo(RejectReason.STALE_SESSION);
        assertThat(InaggHeader.session(reject.segment(), 0)).isEqualTo(6);
        assertThat(InaggHeader.sequence(reject.segment(), 0)).isEqualTo(InaggHeader.SESSION_CAUSE_CONTROL_PLANE);
        assertThat(sw.gauge(SwitchGauge.SESSIONS_STARTED)).as("by the control plane").isEqualTo(1);

        assertThat(sw.removeJob(JOB)).isTrue();
        sw.doWork();
        CaptureTransport.deliver(sw, aggregate(0, 6, 1, 1, 1, 1), 10);
        assertThat(sw.counter(SwitchCounter.DROP_UNKNOWN_JOB)).isEqualTo(1);
        assertThat(sw.gauge(SwitchGauge.JOBS)).isZero();
        assertThat(sw.gauge(SwitchGauge.SLOTS)).isZero();
        assertThat(sw.removeJob(JOB)).isFalse();
    }

    // ---- real workers, killed and restarted ----------------------------------------------------------------------

    private static Worker worker(final InProcessNetwork network, final CounterRegistry registry, final int id,
        final int workers, final int peer, final int elements, final int seed)
    {
        return RestartableWorkers.start(network.endpoint(peer), registry, JOB, id, workers, SWITCH, PEER_TIMEOUT_NS,
            elements, seed);
    }

    @Test
    @Timeout(60)
    void shouldCompleteExactlyWhenEveryWorkerIsKilledMidRunAndRestartedWithTheSameJobId()
    {
        final int workers = 3;
        final int elements = 40_000;
        final InProcessNetwork network = new InProcessNetwork(1 + 2 * workers, 1 << 20, 2048);
        final CounterRegistry registry = new CounterRegistry(256);
        final SoftwareSwitch sw = new SoftwareSwitch(network.endpoint(SWITCH), registry, 64);
        sw.addJob(new SwitchJobConfig(JOB, workers, 16, 64));
        final List<Agent> agents = new ArrayList<>(List.of(sw));
        final List<Worker> first = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            first.add(worker(network, registry, w, workers, 1 + w, elements, 1));
            agents.add(first.get(w).agent());
        }
        // run the first job until it is well under way, then kill every worker (their agents never run again)
        assertThat(runUntil(agents, () -> sw.counter(SwitchCounter.CONTRIBUTIONS) > 300, 20_000)).isTrue();
        assertThat(first).noneMatch(w -> w.op().completion().isDone());
        agents.removeAll(first.stream().map(Worker::agent).toList());

        final List<Worker> second = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            second.add(worker(network, registry, w, workers, 1 + workers + w, elements, 2));
            agents.add(second.get(w).agent());
        }
        final long start = System.nanoTime();
        assertThat(runUntil(agents, () -> second.stream().allMatch(w -> w.op().completion().isDone()), 30_000))
            .as("the restarted job completes").isTrue();
        final long recoveredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        RestartableWorkers.assertExact(second, 2, elements);
        System.out.println("all " + workers + " workers restarted: the new run completed exactly in " + recoveredMs
            + " ms");
    }

    @Test
    @Timeout(60)
    void shouldFailEveryOldWorkerNamingTheRestartedOneAndTellThatOneAPeerIsGone()
    {
        final int workers = 3;
        final int elements = 40_000;
        final InProcessNetwork network = new InProcessNetwork(2 + workers, 1 << 20, 2048);
        final CounterRegistry registry = new CounterRegistry(256);
        final SoftwareSwitch sw = new SoftwareSwitch(network.endpoint(SWITCH), registry, 64);
        sw.addJob(new SwitchJobConfig(JOB, workers, 16, 64));
        final List<Agent> agents = new ArrayList<>(List.of(sw));
        final List<Worker> first = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            first.add(worker(network, registry, w, workers, 1 + w, elements, 1));
            agents.add(first.get(w).agent());
        }
        assertThat(runUntil(agents, () -> sw.counter(SwitchCounter.CONTRIBUTIONS) > 300, 20_000)).isTrue();
        // worker 1 is killed and restarted; workers 0 and 2 go on
        agents.remove(first.get(1).agent());
        final Worker restarted = worker(network, registry, 1, workers, 1 + workers, elements, 2);
        agents.add(restarted.agent());

        final long start = System.nanoTime();
        assertThat(runUntil(agents, () -> first.get(0).op().completion().isDone()
            && first.get(2).op().completion().isDone(), 10_000)).as("the old workers fail, bounded").isTrue();
        final long detectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        for (final int w : new int[] {0, 2})
        {
            assertThat(failureOf(first.get(w))).isInstanceOf(SessionChangedException.class)
                .hasMessageContaining("worker 1 of job " + JOB + " rejoined as a new process")
                .hasMessageContaining("moved to session 1");
        }
        assertThat(sw.counter(SwitchCounter.DROP_STALE_SESSION)).isPositive();

        assertThat(runUntil(agents, () -> restarted.op().completion().isDone(), 10_000))
            .as("the restarted worker fails too, bounded by its peer timeout").isTrue();
        final long aloneMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(failureOf(restarted)).isInstanceOf(PeerTimeoutException.class)
            .hasMessageContaining("a peer worker is gone")
            .satisfies(e -> assertThat(((PeerTimeoutException)e).switchAnswers()).isTrue());
        System.out.println("one of " + workers + " workers restarted: the others failed naming it after " + detectMs
            + " ms; the restarted one reported a peer gone after " + aloneMs + " ms");
    }

    @Test
    @Timeout(60)
    void shouldTellASwitchThatIsGoneFromAPeerThatIsGone()
    {
        final int workers = 2;
        final InProcessNetwork network = new InProcessNetwork(1 + workers, 1 << 20, 2048);
        final CounterRegistry registry = new CounterRegistry(256);
        final SoftwareSwitch sw = new SoftwareSwitch(network.endpoint(SWITCH), registry, 64);
        sw.addJob(new SwitchJobConfig(JOB, workers, 16, 64));
        final List<Agent> agents = new ArrayList<>(List.of(sw));
        final List<Worker> all = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            all.add(worker(network, registry, w, workers, 1 + w, 200_000, 1));
            agents.add(all.get(w).agent());
        }
        assertThat(runUntil(agents, () -> sw.counter(SwitchCounter.CONTRIBUTIONS) > 100, 20_000)).isTrue();
        agents.remove(sw);
        assertThat(runUntil(agents, () -> all.stream().allMatch(w -> w.op().completion().isDone()), 10_000)).isTrue();
        for (final Worker w : all)
        {
            assertThat(failureOf(w)).isInstanceOf(PeerTimeoutException.class)
                .hasMessageContaining("the switch is gone or unreachable")
                .satisfies(e -> assertThat(((PeerTimeoutException)e).switchAnswers()).isFalse());
        }
    }

    @Test
    @Timeout(60)
    void shouldCompleteExactlyWhileASquatterJoinsAndFloodsJunkUnderAdmission()
    {
        final int workers = 2;
        final int elements = 20_000;
        final int squatter = 1 + workers;
        final InProcessNetwork network = new InProcessNetwork(2 + workers, 1 << 20, 2048);
        final CounterRegistry registry = new CounterRegistry(256);
        final SoftwareSwitch sw = new SoftwareSwitch(network.endpoint(SWITCH), registry, 64);
        sw.addJob(new SwitchJobConfig(JOB, workers, 16, 64, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, new int[] {1, 2}, 3));
        final org.inagg.transport.Transport junk = network.endpoint(squatter);
        final int[] sequence = {0};
        final Agent squatting = new Agent()
        {
            @Override
            public int doWork()
            {
                // JOINs as worker 0 with ever new incarnations, and AGGREGATEs of the current session for every slot
                final byte[] join = join(0, workers, InaggHeader.ANY_SESSION, ++sequence[0]);
                final long a = junk.claim(SWITCH, join.length);
                if (a != org.inagg.transport.Transport.CLAIM_FAILED)
                {
                    MemorySegment.copy(MemorySegment.ofArray(join), 0, junk.txMemory(), a, join.length);
                    junk.commit();
                }
                final byte[] bytes = CaptureTransport.aggregate(JOB, sequence[0] & 1, sequence[0], 0, 0, new int[64]);
                InaggHeader.setSession(MemorySegment.ofArray(bytes), 0, 3);
                final long b = junk.claim(SWITCH, bytes.length);
                if (b != org.inagg.transport.Transport.CLAIM_FAILED)
                {
                    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, junk.txMemory(), b, bytes.length);
                    junk.commit();
                }
                junk.flush();
                junk.poll((m, o, l, p) -> { }, 64);
                return 1;
            }

            @Override
            public String roleName()
            {
                return "squatter";
            }
        };
        final List<Agent> agents = new ArrayList<>(List.of(sw, squatting));
        final List<Worker> all = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            all.add(worker(network, registry, w, workers, 1 + w, elements, 4));
            agents.add(all.get(w).agent());
        }
        assertThat(runUntil(agents, () -> all.stream().allMatch(w -> w.op().completion().isDone()), 30_000)).isTrue();
        for (final Worker w : all)
        {
            assertThat(failureOf(w)).isNull();
            for (int k = 0; k < elements; k++)
            {
                assertThat(w.out().getAtIndex(ValueLayout.JAVA_INT, k)).isEqualTo(value(4, 0, k) + value(4, 1, k));
            }
        }
        assertThat(sw.counter(SwitchCounter.DROP_SOURCE_MISMATCH)).as("the squatter's JOINs and junk")
            .isGreaterThan(10);
    }
}
