package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.inagg.services.http.JsonHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24, controller state: what one tenant's large job or a slow switch must not do to the controller and to
 * everyone else's jobs. The journal stays in proportion to the jobs (a change writes one short line, not the whole
 * membership), a compaction that fails does not fail the changes after it, and the switch is called outside the
 * registry's lock (recovery's calls too) so that other jobs' renewals go on while it is slow.
 */
class JobRegistrySecurityTest
{
    private static final long LEASE_MS = 6000;

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_000_000);
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads()
    {
        threads.shutdownNow();
    }

    private JobRegistry registry(final SwitchBackend backend)
    {
        return registry(backend, true);
    }

    private JobRegistry registry(final SwitchBackend backend, final boolean recover)
    {
        final JobRegistry registry = new JobRegistry(backend, Journal.open(dir.resolve("journal")),
            new SlotAllocator(8192), now::get, LEASE_MS, 256, 16, false);
        if (recover)
        {
            registry.recover();
        }
        return registry;
    }

    private static RegisterRequest rank(final String name, final int rank, final int world)
    {
        return new RegisterRequest(name, rank, world, "int32", 10_000,
            new InetSocketAddress("127.0.0.1", 20_000 + rank), 0, null);
    }

    private static String id(final JsonHttp.Answer answer)
    {
        return answer.body().path("registration").asText();
    }

    @Test
    @Timeout(60)
    void shouldWriteAShortLinePerChangeSoThatALargeJobDoesNotGrowTheJournalWithTheSquareOfItsWorld() throws Exception
    {
        final int world = 1024;
        final FakeSwitch fake = new FakeSwitch();
        JobRegistry registry = registry(fake);
        for (int rank = 0; rank < world; rank++)
        {
            registry.register(rank("wide", rank, world));
        }
        assertThat(fake.jobs).hasSize(1);
        final Path journal = dir.resolve("journal");
        final List<String> lines = Files.readAllLines(journal);
        assertThat(lines).as("no line names every rank").allSatisfy(line -> assertThat(line.length()).isLessThan(1024));
        assertThat(Files.size(journal)).as("the membership once, plus a bounded tail of changes")
            .isLessThan(400L * world);
        registry.close();

        registry = registry(fake);
        assertThat(registry.jobCount()).isEqualTo(1);
        assertThat(registry.job("wide", Caller.embedded()).path("registered").asInt()).isEqualTo(world);
        assertThat(registry.job("wide", Caller.embedded()).path("state").asText()).isEqualTo("running");
        registry.close();
    }

    @Test
    @Timeout(60)
    void shouldKeepRecordingChangesWhenACompactionFailsAndCompactOnceItCanAgain() throws Exception
    {
        final FakeSwitch fake = new FakeSwitch();
        JobRegistry registry = registry(fake);
        final Path blocker = dir.resolve("journal.tmp");
        Files.createDirectory(blocker); // the compaction's temporary file cannot be written (as a full or read-only disk)
        Files.writeString(blocker.resolve("in-the-way"), "x");
        for (int job = 0; job < 10; job++)
        {
            assertThat(registry.register(rank("job-" + job, 0, 2)).status()).isEqualTo(202);
        }
        for (int round = 0; round < 300; round++)
        {
            assertThat(registry.register(rank("churn", 0, 1)).status()).as("round %d with compactions failing", round)
                .isEqualTo(200);
            assertThat(registry.free("churn", Caller.embedded()).path("freed").asBoolean()).isTrue();
        }
        final long grown = Files.lines(dir.resolve("journal")).count();
        assertThat(grown).as("every change recorded").isGreaterThanOrEqualTo(600);

        Files.delete(blocker.resolve("in-the-way"));
        Files.delete(blocker);
        for (int round = 0; round < 300; round++)
        {
            assertThat(registry.register(rank("churn", 0, 1)).status()).isEqualTo(200);
            assertThat(registry.free("churn", Caller.embedded()).path("freed").asBoolean()).isTrue();
        }
        for (int job = 0; job < 10; job++)
        {
            assertThat(registry.register(rank("job-" + job, 1, 2)).status()).isEqualTo(200);
        }
        assertThat(Files.lines(dir.resolve("journal")).count()).as("compacted again once the disk let it")
            .isLessThan(600);
        registry.close();

        registry = registry(fake);
        assertThat(registry.jobCount()).isEqualTo(10);
        assertThat(registry.job("job-9", Caller.embedded()).path("state").asText()).isEqualTo("running");
        registry.close();
    }

    /** Installs block until {@link #release} once {@link #slow} is set; {@link #entered} counts down inside. */
    private static final class SlowSwitch implements SwitchBackend
    {
        final FakeSwitch inner = new FakeSwitch();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        volatile boolean slow;

        @Override
        public String describe()
        {
            return "slow fake switch";
        }

        @Override
        public InetSocketAddress dataAddress()
        {
            return inner.dataAddress();
        }

        private void maybeWait()
        {
            if (slow)
            {
                entered.countDown();
                try
                {
                    release.await(20, TimeUnit.SECONDS);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void install(final JobProgram program)
        {
            maybeWait();
            inner.install(program);
        }

        @Override
        public boolean remove(final int jobId)
        {
            maybeWait();
            return inner.remove(jobId);
        }

        @Override
        public java.util.Map<Integer, JobProgram> installed()
        {
            return inner.installed();
        }

        @Override
        public void close()
        {
        }
    }

    @Test
    @Timeout(60)
    void shouldRenewOtherJobsLeasesWhileTheSwitchIsSlowToInstallAJob() throws Exception
    {
        final SlowSwitch backend = new SlowSwitch();
        final JobRegistry registry = registry(backend);
        final String other = id(registry.register(rank("other", 0, 1)));
        backend.inner.down = true;
        final String waiting = id(registry.register(rank("starting", 0, 1))); // the switch did not answer: 202
        backend.inner.down = false;
        backend.slow = true;
        try
        {
            final Future<JsonHttp.Answer> starting = threads.submit(() -> registry.status(waiting, Caller.embedded()));
            assertThat(backend.entered.await(10, TimeUnit.SECONDS)).as("the poll's install began").isTrue();
            for (int step = 0; step < 4; step++)
            {
                now.addAndGet(LEASE_MS * 6 / 10);
                for (final String id : List.of(other, waiting))
                {
                    final Future<JsonHttp.Answer> renewal = threads.submit(() -> registry.renew(id, Caller.embedded()));
                    assertThat(renewal.get(5, TimeUnit.SECONDS).status()).as("renewal %d during the install", step)
                        .isEqualTo(200);
                }
                assertThat(threads.submit(registry::sweep).get(5, TimeUnit.SECONDS)).as("no lease expires").isZero();
            }
            assertThat(threads.submit(() -> registry.jobs(Caller.embedded())).get(5, TimeUnit.SECONDS)
                .path("jobs").size()).isEqualTo(2);
            assertThat(starting.isDone()).as("still waiting for the switch").isFalse();
            backend.release.countDown();
            assertThat(starting.get(10, TimeUnit.SECONDS).status()).as("ready once the switch took it")
                .isEqualTo(200);
            assertThat(backend.inner.jobs).hasSize(2);
        }
        finally
        {
            backend.release.countDown();
        }
        registry.close();
    }

    @Test
    @Timeout(60)
    void shouldRenewOtherJobsLeasesWhileTheSwitchIsSlowToRemoveAJobAndNotReuseItsIdBeforeItIsGone() throws Exception
    {
        final SlowSwitch backend = new SlowSwitch();
        final JobRegistry registry = registry(backend);
        final String other = id(registry.register(rank("other", 0, 1)));
        final String ending = id(registry.register(rank("ending", 0, 1)));
        final int endingId = registry.job("ending", Caller.embedded()).path("jobId").asInt();
        backend.slow = true;
        try
        {
            final Future<JsonHttp.Answer> release = threads.submit(() -> registry.release(ending, Caller.embedded()));
            assertThat(backend.entered.await(10, TimeUnit.SECONDS)).as("the removal began").isTrue();
            now.addAndGet(LEASE_MS * 6 / 10);
            assertThat(threads.submit(() -> registry.renew(other, Caller.embedded())).get(5, TimeUnit.SECONDS)
                .status()).isEqualTo(200);
            backend.slow = false;
            final JsonHttp.Answer next = threads.submit(() -> registry.register(rank("next", 0, 1)))
                .get(5, TimeUnit.SECONDS);
            assertThat(next.body().path("jobId").asInt()).as("the id of a job still on the switch is not reused")
                .isNotEqualTo(endingId);
            backend.release.countDown();
            assertThat(release.get(10, TimeUnit.SECONDS).body().path("jobFreed").asBoolean()).isTrue();
            assertThat(backend.inner.jobs.keySet()).doesNotContain(endingId).hasSize(2);
        }
        finally
        {
            backend.release.countDown();
        }
        registry.close();
    }

    @Test
    @Timeout(60)
    void shouldServeOtherRequestsWhileRecoveryReinstallsAJobOnASlowSwitch() throws Exception
    {
        final FakeSwitch first = new FakeSwitch();
        JobRegistry registry = registry(first);
        final String ranks = id(registry.register(rank("survivor", 0, 1)));
        registry.close();

        final SlowSwitch backend = new SlowSwitch(); // restarted too: it lost the job, and answers slowly
        backend.slow = true;
        registry = registry(backend, false);
        final JobRegistry recovering = registry;
        try
        {
            final Future<Integer> recovered = threads.submit(recovering::recover);
            assertThat(backend.entered.await(10, TimeUnit.SECONDS)).as("recovery's install began").isTrue();
            assertThat(threads.submit(() -> recovering.jobs(Caller.embedded())).get(5, TimeUnit.SECONDS)
                .path("jobs").size()).as("the registry is not locked during the switch call").isEqualTo(1);
            now.addAndGet(LEASE_MS / 2);
            assertThat(threads.submit(() -> recovering.renew(ranks, Caller.embedded())).get(5, TimeUnit.SECONDS)
                .status()).isEqualTo(200);
            assertThat(recovered.isDone()).as("still waiting for the switch").isFalse();
            backend.release.countDown();
            assertThat(recovered.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            assertThat(backend.inner.jobs).as("installed again").hasSize(1);
            assertThat(recovering.status(ranks, Caller.embedded()).status()).isEqualTo(200);
        }
        finally
        {
            backend.release.countDown();
        }
        registry.close();
    }
}
