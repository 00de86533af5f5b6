package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.SessionChangedException;
import org.inagg.agent.CounterRegistry;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.services.http.ApiToken;
import org.inagg.services.switchcontrol.SwitchControlServer;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller end to end on loopback: an embedded {@link Controller} programs a {@link SoftwareSwitch} on UDP through
 * its control port ({@link SwitchControlServer}), and real {@link AllReduceJob}s find their job through
 * {@link ControllerClient}. Int32 sums, checked exactly.
 */
class ControllerEndToEndTest
{
    private static final String JOB_SECRET = "end-to-end-job-secret-0001";
    private static final int ELEMENTS = 20_000;
    private static final System.Logger LOGGER = System.getLogger(ControllerEndToEndTest.class.getName());

    @TempDir
    Path dir;

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private SoftwareSwitch softwareSwitch;
    private SwitchControlServer control;
    private SoftwareSwitchBackend backend;
    private Controller controller;

    @AfterEach
    void tearDown() throws Exception
    {
        threads.shutdownNow();
        for (int i = toClose.size() - 1; i >= 0; i--)
        {
            try
            {
                toClose.get(i).close();
            }
            catch (final Exception ignored)
            {
                // best effort
            }
        }
        assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private void startSwitch()
    {
        final UdpTransport transport = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0), List.of(), 256,
            InaggHeader.messageLength(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU), 64);
        softwareSwitch = new SoftwareSwitch(transport, new CounterRegistry(64), 256);
        control = SwitchControlServer.launch(new SwitchControlServer.Context().softwareSwitch(softwareSwitch)
            .transport(transport).bind(new InetSocketAddress("127.0.0.1", 0)));
        final AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(0), Throwable::printStackTrace,
            null, new CompositeAgent(softwareSwitch, control));
        AgentRunner.startOnThread(runner);
        toClose.add(runner);
        toClose.add(control);
        backend = new SoftwareSwitchBackend(URI.create("http://127.0.0.1:" + control.address().getPort()), null,
            Duration.ofSeconds(2));
        toClose.add(backend);
    }

    private Controller startController(final int port, final long leaseMs)
    {
        final Controller started = Controller.launch(new ControllerContext().bind(new InetSocketAddress("127.0.0.1",
            port)).journal(dir.resolve("controller.journal")).leaseMs(leaseMs).poolSlots(64).defaultSlots(16)
            .switchBackend(backend));
        toClose.add(started);
        return started;
    }

    /** One rank: a UDP socket bound first, then registered; the job opened on the assignment. */
    private final class Rank implements AutoCloseable
    {
        final int rank;
        final int world;
        final UdpTransport transport;
        final ControllerClient client;
        Assignment assignment;
        AllReduceJob job;

        Rank(final String url, final int rank, final int world)
        {
            this.rank = rank;
            this.world = world;
            // The ranks of one job share its secret, as a launcher's INAGG_JOB_SECRET gives it to them.
            this.client = new ControllerClient(url, Duration.ofSeconds(2), ApiToken.NONE, JOB_SECRET);
            this.transport = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0),
                List.of(client.switchAddress()), 1, InaggHeader.messageLength(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU),
                64);
        }

        Rank register(final String name)
        {
            return register(name, Duration.ofSeconds(20));
        }

        Rank register(final String name, final Duration wait)
        {
            assignment = client.register(name, rank, world, "int32", ELEMENTS, transport.localAddress(), 0, wait);
            return this;
        }

        Rank open()
        {
            job = AllReduceJob.open(new JobContext().jobId(assignment.jobId()).workerId(assignment.workerId())
                .joinCredential(assignment.joinCredential()).workers(world).transport(transport).peerTimeout(Duration.ofSeconds(8))
                .retransmitTimeout(Duration.ofMillis(5)));
            return this;
        }

        int[] allReduce(final int iteration)
        {
            final int[] out = new int[ELEMENTS];
            job.allReduce(input(rank, iteration), out);
            return out;
        }

        /** As a killed process: the socket and agent gone, the lease no longer renewed, nothing deleted. */
        void kill()
        {
            client.stopRenewing();
            if (job != null)
            {
                job.close();
            }
            else
            {
                transport.close();
            }
        }

        @Override
        public void close()
        {
            if (job != null)
            {
                job.close();
            }
            else
            {
                transport.close();
            }
            client.close();
        }
    }

    private static int[] input(final int rank, final int iteration)
    {
        final int[] in = new int[ELEMENTS];
        for (int k = 0; k < ELEMENTS; k++)
        {
            in[k] = (rank + 1) * 1_000_003 * (k + 1) + iteration * 7919 - rank * 31 * k;
        }
        return in;
    }

    private static int[] expected(final int world, final int iteration)
    {
        final int[] sum = new int[ELEMENTS];
        for (int r = 0; r < world; r++)
        {
            final int[] in = input(r, iteration);
            for (int k = 0; k < ELEMENTS; k++)
            {
                sum[k] += in[k];
            }
        }
        return sum;
    }

    private List<Rank> registerAll(final String url, final String name, final int world) throws Exception
    {
        final List<Future<Rank>> futures = new ArrayList<>();
        for (int r = 0; r < world; r++)
        {
            final Rank rank = new Rank(url, r, world);
            toClose.add(rank);
            futures.add(threads.submit(() -> rank.register(name)));
        }
        final List<Rank> ranks = new ArrayList<>();
        for (final Future<Rank> future : futures)
        {
            ranks.add(future.get(30, TimeUnit.SECONDS));
        }
        return ranks;
    }

    /** Opens every rank's job (their JOINs wait for each other) and runs {@code iterations} checked all-reduces. */
    private void runExactly(final List<Rank> ranks, final int from, final int iterations) throws Exception
    {
        final List<Future<?>> futures = new ArrayList<>();
        for (final Rank rank : ranks)
        {
            futures.add(threads.submit((Callable<Void>)() ->
            {
                if (rank.job == null)
                {
                    rank.open();
                }
                for (int i = from; i < from + iterations; i++)
                {
                    assertThat(rank.allReduce(i)).as("rank %d iteration %d", rank.rank, i)
                        .isEqualTo(expected(rank.world, i));
                }
                return null;
            }));
        }
        for (final Future<?> future : futures)
        {
            future.get(60, TimeUnit.SECONDS);
        }
    }

    private static void await(final BooleanSupplier condition, final long boundMs, final String what)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(boundMs);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                throw new AssertionError("not within " + boundMs + " ms: " + what);
            }
            try
            {
                Thread.sleep(5);
            }
            catch (final InterruptedException ex)
            {
                throw new AssertionError(ex);
            }
        }
    }

    private static void sendJunk(final InetSocketAddress to, final int jobId, final int world) throws IOException
    {
        try (DatagramChannel squatter = DatagramChannel.open())
        {
            squatter.bind(new InetSocketAddress("127.0.0.1", 0));
            final byte[] join = new byte[InaggHeader.LENGTH];
            InaggHeader.writeJoin(MemorySegment.ofArray(join), 0, jobId, 0, world, InaggHeader.ANY_SESSION, 77);
            squatter.send(ByteBuffer.wrap(join), to);
            for (int slot = 0; slot < 16; slot++)
            {
                final byte[] junk = new byte[InaggHeader.messageLength(8)];
                InaggHeader.write(MemorySegment.ofArray(junk), 0, MessageType.AGGREGATE, InaggHeader.FLAG_INT32, jobId,
                    slot % world, slot, 0, 0, 8, 0, 0, 0);
                squatter.send(ByteBuffer.wrap(junk), to);
            }
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------

    @Test
    @Timeout(90)
    void shouldAdmitAJobSumExactlyIgnoreASquatterAndFreeTheSlotsWhenTheRanksFinish() throws Exception
    {
        startSwitch();
        controller = startController(0, 3000);
        final List<Rank> ranks = registerAll(controller.url(), "run-42", 3);
        final Assignment first = ranks.getFirst().assignment;
        assertThat(ranks).extracting(r -> r.assignment.workerId()).containsExactly(0, 1, 2);
        assertThat(ranks).extracting(r -> r.assignment.jobId()).containsOnly(first.jobId());
        assertThat(ranks).extracting(r -> r.assignment.session()).containsOnly(first.session());
        assertThat(softwareSwitch.jobs().get(first.jobId()).registeredSources()).isTrue();
        assertThat(controller.freeSlots()).isEqualTo(64 - 16);

        // a squatter JOINs as worker 0 and sprays AGGREGATEs from an unregistered port: nothing changes
        sendJunk(backend.dataAddress(), first.jobId(), 3);
        await(() -> softwareSwitch.counter(SwitchCounter.DROP_SOURCE_MISMATCH) >= 17, 5000, "junk counted");

        runExactly(ranks, 0, 3);
        // A real rank repeats its JOIN when the JOIN_ACK is late (5 ms retransmission on a loaded box): at least 3.
        // The squatter's JOINs were dropped as source mismatches: one accepted would have started a new session and
        // failed the run above with SessionChangedException.
        assertThat(softwareSwitch.counter(SwitchCounter.JOINS)).as("the real ranks joined").isGreaterThanOrEqualTo(3);
        assertThat(softwareSwitch.session(first.jobId())).as("no session started by the squatter")
            .isEqualTo(first.session());
        for (final Rank rank : ranks)
        {
            rank.close();
        }
        await(() -> controller.jobCount() == 0, 5000, "job freed after every rank deleted");
        await(() -> !softwareSwitch.jobs().containsKey(first.jobId()), 5000, "job removed from the switch");
        assertThat(controller.freeSlots()).isEqualTo(64);
    }

    @Test
    @Timeout(90)
    void shouldRefuseAWorldSizeMismatchAndTimeOutNamingTheMissingRanks() throws Exception
    {
        startSwitch();
        controller = startController(0, 3000);
        final Rank zero = new Rank(controller.url(), 0, 3);
        toClose.add(zero);
        final Future<Rank> waiting = threads.submit(() -> zero.register("short", Duration.ofSeconds(3)));
        final Rank wrong = new Rank(controller.url(), 1, 4);
        toClose.add(wrong);
        await(() -> controller.jobCount() == 1, 5000, "job admitted");
        assertThatThrownBy(() -> wrong.register("short")).isInstanceOf(ControllerException.class)
            .hasMessageContaining("world size 4").hasMessageContaining("admitted with 3")
            .satisfies(e -> assertThat(((ControllerException)e).status()).isEqualTo(409));

        final Rank one = new Rank(controller.url(), 1, 3);
        toClose.add(one);
        assertThatThrownBy(() -> one.client.register("short", 1, 3, "int32", ELEMENTS, one.transport.localAddress(),
            0, Duration.ofMillis(600))).isInstanceOf(ControllerException.class)
            .hasMessageContaining("2 of 3 ranks registered for job 'short' after 600 ms; missing rank 2");
        assertThatThrownBy(() -> waiting.get(30, TimeUnit.SECONDS)).hasMessageContaining("missing rank");
    }

    @Test
    @Timeout(120)
    void shouldIssueASessionPastTheOneTheSwitchStartedWhenARankBypassedTheController() throws Exception
    {
        startSwitch();
        controller = startController(0, 3000);
        final List<Rank> ranks = registerAll(controller.url(), "bypass", 2);
        runExactly(ranks, 0, 1);
        final int jobId = ranks.getFirst().assignment.jobId();
        final int oldSession = ranks.getFirst().assignment.session();
        final InetSocketAddress registeredSource = ranks.get(1).transport.localAddress();

        // Rank 1 restarted by hand on its registered port, straight to the switch, with the JOIN credential its
        // registration got: a JOIN with a new incarnation from a registered source, which the software switch answers
        // with a session of its own. (Without the credential it is dropped: shouldIgnoreAForgedJoinAttack...)
        ranks.get(1).kill();
        final UdpTransport bypass = UdpTransport.open(registeredSource, List.of(ranks.getFirst().client
            .switchAddress()), 1, InaggHeader.messageLength(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU), 64);
        final AllReduceJob bypassing = AllReduceJob.open(new JobContext().jobId(jobId).workerId(1).workers(2)
            .joinCredential(ranks.get(1).assignment.joinCredential())
            .transport(bypass).peerTimeout(Duration.ofSeconds(3)).retransmitTimeout(Duration.ofMillis(5)));
        toClose.add(bypassing);
        threads.submit(() -> bypassing.allReduceAsync(input(1, 0), new int[ELEMENTS]));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (softwareSwitch.session(jobId) == oldSession && System.nanoTime() - deadline < 0)
        {
            Thread.sleep(10);
        }
        final int switchSession = softwareSwitch.session(jobId);
        assertThat(switchSession).as("the switch started a session by itself").isNotEqualTo(oldSession);

        // Rank 1 restarted through the controller: the new session is none the switch has used for this job.
        final Rank restarted = new Rank(controller.url(), 1, 2);
        toClose.add(restarted);
        final Future<Rank> registration = threads.submit(() -> restarted.register("bypass"));
        ranks.getFirst().close();
        final Rank rank0 = new Rank(controller.url(), 0, 2);
        toClose.add(rank0);
        rank0.register("bypass");
        registration.get(30, TimeUnit.SECONDS);
        assertThat(restarted.assignment.session()).isEqualTo(rank0.assignment.session())
            .isNotEqualTo(oldSession).isNotEqualTo(switchSession);
        bypassing.close();
        runExactly(List.of(rank0, restarted), 0, 2);
    }

    @Test
    @Timeout(120)
    void shouldIgnoreAForgedJoinAttackFromARegisteredSourceWithoutTheRanksCredential() throws Exception
    {
        startSwitch();
        controller = startController(0, 3000);
        final List<Rank> ranks = registerAll(controller.url(), "forged", 2);
        assertThat(ranks).extracting(r -> r.assignment.joinCredential())
            .as("each rank its own credential, never 'none'").doesNotContain(InaggHeader.NO_CREDENTIAL)
            .doesNotHaveDuplicates();
        final int jobId = ranks.getFirst().assignment.jobId();
        final int session = ranks.getFirst().assignment.session();

        // Before the ranks open their jobs, the attacker sends JOINs as rank 1 from rank 1's own registered ip:port (a
        // spoofed source; here the rank's own socket, still idle) with a new incarnation: no credential, a guessed
        // one, rank 0's. Accepted, the first would take rank 1's place in the session and the real rank 1's JOIN
        // (another incarnation) would start a new session under rank 0.
        final long[] forged = {InaggHeader.NO_CREDENTIAL, 0x0123_4567_89AB_CDEFL,
            ranks.getFirst().assignment.joinCredential()};
        final UdpTransport rank1 = ranks.get(1).transport;
        for (int i = 0; i < forged.length; i++)
        {
            final byte[] join = new byte[InaggHeader.joinLength(forged[i])];
            InaggHeader.writeJoin(MemorySegment.ofArray(join), 0, jobId, 1, 2, InaggHeader.ANY_SESSION,
                0xE710 + i, forged[i]);
            final long offset = rank1.claim(0, join.length);
            assertThat(offset).isNotEqualTo(org.inagg.transport.Transport.CLAIM_FAILED);
            MemorySegment.copy(MemorySegment.ofArray(join), 0, rank1.txMemory(), offset, join.length);
            rank1.commit();
            rank1.flush();
        }
        await(() -> softwareSwitch.counter(SwitchCounter.DROP_BAD_CREDENTIAL) >= forged.length, 5000,
            "forged JOINs counted");
        assertThat(softwareSwitch.session(jobId)).as("no session started by a forged JOIN").isEqualTo(session);
        assertThat(softwareSwitch.counter(SwitchCounter.JOINS)).as("none answered").isZero();
        // the job runs undisturbed, in its session
        runExactly(ranks, 0, 2);
        assertThat(softwareSwitch.session(jobId)).isEqualTo(session);
    }

    @Test
    @Timeout(120)
    void shouldFailTheOldRunWithSessionChangedWhenARankRestartsAndRunTheNewOneExactly() throws Exception
    {
        startSwitch();
        controller = startController(0, 3000);
        final List<Rank> ranks = registerAll(controller.url(), "restart", 3);
        runExactly(ranks, 0, 2);
        final int oldSession = ranks.getFirst().assignment.session();

        // the survivors block in an all-reduce that rank 1 never joins: rank 1 was killed
        ranks.get(1).kill();
        final CountDownLatch started = new CountDownLatch(2);
        final List<Future<Throwable>> survivors = new ArrayList<>();
        for (final Rank survivor : List.of(ranks.get(0), ranks.get(2)))
        {
            survivors.add(threads.submit(() ->
            {
                started.countDown();
                try
                {
                    survivor.allReduce(2);
                    return null;
                }
                catch (final RuntimeException ex)
                {
                    return ex;
                }
            }));
        }
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(200);

        // the launcher starts rank 1 again: it registers, the job moves to a new session at once
        final long restartNs = System.nanoTime();
        final Rank restarted = new Rank(controller.url(), 1, 3);
        toClose.add(restarted);
        final Future<Rank> restartedRegistration = threads.submit(() -> restarted.register("restart"));
        for (final Future<Throwable> survivor : survivors)
        {
            assertThat(survivor.get(10, TimeUnit.SECONDS)).isInstanceOf(SessionChangedException.class)
                .hasMessageContaining("session");
        }
        final double detectMs = (System.nanoTime() - restartNs) / 1e6;
        ranks.get(0).close();
        ranks.get(2).close();

        // the launcher restarts the survivors; all three register into the new session and sum exactly
        final List<Rank> next = new ArrayList<>();
        for (final int r : new int[] {0, 2})
        {
            final Rank rank = new Rank(controller.url(), r, 3);
            toClose.add(rank);
            next.add(rank);
        }
        final List<Future<Rank>> registrations = new ArrayList<>();
        for (final Rank rank : next)
        {
            registrations.add(threads.submit(() -> rank.register("restart")));
        }
        for (final Future<Rank> registration : registrations)
        {
            registration.get(30, TimeUnit.SECONDS);
        }
        next.add(1, restartedRegistration.get(30, TimeUnit.SECONDS));
        assertThat(next).extracting(r -> r.assignment.session()).containsOnly(next.getFirst().assignment.session())
            .doesNotContain(oldSession);
        runExactly(next, 0, 3);
        final double recoverMs = (System.nanoTime() - restartNs) / 1e6;
        LOGGER.log(System.Logger.Level.INFO, () -> String.format("rank restart: survivors failed %.0f ms after the "
            + "restarted rank registered; new session summed 3 all-reduces %.0f ms after it", detectMs, recoverMs));
        assertThat(softwareSwitch.counter(SwitchCounter.DROP_STALE_SESSION)).isPositive();
        for (final Rank rank : next)
        {
            rank.close();
        }
        await(() -> controller.jobCount() == 0, 10_000, "job freed");
    }

    @Test
    @Timeout(120)
    void shouldLetARunningJobCompleteWhileTheControllerRestartsAndResumeItsLeases() throws Exception
    {
        startSwitch();
        final int port = freePort();
        controller = startController(port, 1500);
        final List<Rank> ranks = registerAll(controller.url(), "survivor", 2);
        final int jobId = ranks.getFirst().assignment.jobId();
        final Future<?> running = threads.submit((Callable<Void>)() ->
        {
            runExactly(ranks, 0, 2);
            Thread.sleep(2500); // longer than a lease: renewals must reach the new controller
            runExactly(ranks, 2, 2);
            return null;
        });
        Thread.sleep(300);
        controller.close();
        final long downNs = System.nanoTime();
        Thread.sleep(500);
        controller = startController(port, 1500);
        final double restartMs = (System.nanoTime() - downNs) / 1e6;
        assertThat(controller.jobCount()).as("the job is known again").isEqualTo(1);
        running.get(60, TimeUnit.SECONDS);
        assertThat(controller.jobCount()).as("leases resumed: still known after more than a lease").isEqualTo(1);
        assertThat(softwareSwitch.jobs()).containsKey(jobId);
        LOGGER.log(System.Logger.Level.INFO, () -> String.format("controller restart: down %.0f ms; the job ran on",
            restartMs));
        for (final Rank rank : ranks)
        {
            rank.close();
        }
        await(() -> controller.jobCount() == 0, 5000, "job freed");
        await(() -> !softwareSwitch.jobs().containsKey(jobId), 5000, "removed from the switch");
    }

    @Test
    @Timeout(60)
    void shouldFreeTheJobAndItsSlotsWhenItsRanksVanish() throws Exception
    {
        startSwitch();
        controller = startController(0, 600);
        final List<Rank> ranks = registerAll(controller.url(), "vanish", 2);
        final int jobId = ranks.getFirst().assignment.jobId();
        runExactly(ranks, 0, 1);
        final long killedNs = System.nanoTime();
        ranks.forEach(Rank::kill);
        await(() -> !softwareSwitch.jobs().containsKey(jobId), 5000, "job removed from the switch");
        // the slots come back once the switch answered the removal, a moment after it dropped the job
        await(() -> controller.freeSlots() == 64, 5000, "slots returned");
        final double freedMs = (System.nanoTime() - killedNs) / 1e6;
        assertThat(controller.jobCount()).isZero();
        assertThat(freedMs).as("a lease of 600 ms and a sweep").isGreaterThanOrEqualTo(400).isLessThan(3000);
        LOGGER.log(System.Logger.Level.INFO, () -> String.format("vanished ranks: job freed %.0f ms after they "
            + "stopped (lease 600 ms)", freedMs));
    }
}
