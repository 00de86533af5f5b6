package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JobLifecycle} alone: the rules on a fake clock, with no switch and no HTTP; what it refuses is a
 * {@link Refusal} with its reason, never a status code.
 */
@Timeout(10)
class JobLifecycleTest
{
    private static final long LEASE_MS = 1000;
    private static final String SECRET = "a-job-secret-of-the-owner";

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(5_000);
    private JobLifecycle lifecycle;

    private JobLifecycle lifecycle(final int poolSlots)
    {
        final RegistryState state = new RegistryState(new JobJournal(Journal.open(dir.resolve("journal"))),
            new SlotAllocator(poolSlots), now::get, LEASE_MS);
        lifecycle = new JobLifecycle(state, 256, 16, new JobAccess(false));
        lifecycle.recover();
        return lifecycle;
    }

    @AfterEach
    void close()
    {
        if (lifecycle != null)
        {
            lifecycle.close();
        }
    }

    private static RegisterRequest rank(final String name, final int rank, final int world, final int port)
    {
        return new RegisterRequest(name, rank, world, "int32", 10_000, new InetSocketAddress("127.0.0.1", port), 0,
            null);
    }

    private static Caller owner()
    {
        return new Caller(false, SECRET, InetAddress.getLoopbackAddress());
    }

    private JobLifecycle.Joined join(final RegisterRequest request)
    {
        return lifecycle.join(request, owner(), JobLifecycle.NOT_ASKED);
    }

    private static Refusal.Reason reasonOf(final Throwable thrown)
    {
        return ((Refusal)thrown).reason();
    }

    @Test
    void shouldAdmitAJobAndWaitForEveryRankBeforeItNeedsTheSwitch()
    {
        lifecycle(64);
        final JobLifecycle.Joined first = join(rank("run", 1, 3, 40001));
        assertThat(first.askSessionOf()).isZero();
        assertThat(first.newSecret()).as("the caller brought its own").isNull();
        assertThat(first.job().needsInstall()).isFalse();
        final RankStatus waiting = lifecycle.status(first.job(), first.registration(), null);
        assertThat(waiting.ready()).isFalse();
        assertThat(waiting.missing()).containsExactly(0, 2);
        assertThat(waiting.slots()).as("ceil(10000 / 256) capped at 16").isEqualTo(16);

        join(rank("run", 0, 3, 40000));
        final JobLifecycle.Joined last = join(rank("run", 2, 3, 40002));
        assertThat(last.job().needsInstall()).as("every rank registered: the switch must hold it").isTrue();
        assertThat(last.job().program().sources()).extracting(InetSocketAddress::getPort)
            .containsExactly(40000, 40001, 40002);
        assertThat(lifecycle.status(last.job(), last.registration(), null).ready())
            .as("not before the switch holds it").isFalse();
    }

    @Test
    void shouldRefuseWithAReasonAndAMessageNamingWhatIsWrong()
    {
        lifecycle(20);
        join(rank("run", 0, 2, 40000));
        assertThatThrownBy(() -> join(rank("run", 1, 3, 40001))).isInstanceOf(Refusal.class)
            .hasMessageContaining("world size 3").hasMessageContaining("admitted with 2")
            .satisfies(e -> assertThat(reasonOf(e)).isEqualTo(Refusal.Reason.MISMATCH));
        assertThatThrownBy(() -> lifecycle.join(rank("run", 1, 2, 40001),
            new Caller(false, "someone-elses-secret-0", InetAddress.getLoopbackAddress()), JobLifecycle.NOT_ASKED))
            .hasMessageContaining("may not register rank 1 of job 'run'")
            .satisfies(e -> assertThat(reasonOf(e)).isEqualTo(Refusal.Reason.NOT_ALLOWED));
        assertThatThrownBy(() -> join(rank("other", 0, 1, 40002))).hasMessageContaining("no free slots")
            .satisfies(e -> assertThat(reasonOf(e)).isEqualTo(Refusal.Reason.NO_ROOM));
        assertThatThrownBy(() -> lifecycle.job("nobody", owner())).hasMessageContaining("unknown job 'nobody'")
            .satisfies(e -> assertThat(reasonOf(e)).isEqualTo(Refusal.Reason.UNKNOWN));
        assertThatThrownBy(() -> lifecycle.renew("no-such-id", owner()))
            .satisfies(e -> assertThat(reasonOf(e)).isEqualTo(Refusal.Reason.GONE));
    }

    @Test
    void shouldMoveARunningJobToASessionAfterTheSwitchsOwnWhenARankRegistersAgain()
    {
        lifecycle(64);
        final JobLifecycle.Joined r0 = join(rank("run", 0, 2, 40000));
        final JobLifecycle.Joined r1 = join(rank("run", 1, 2, 40001));
        final ControlledJob job = r1.job();
        job.running = true; // what SwitchSync records once the switch holds it
        job.reprogram = false;
        final int before = job.session;

        final JobLifecycle.Joined asking = join(rank("run", 1, 2, 40011));
        assertThat(asking.askSessionOf()).as("first the switch's own session").isEqualTo(job.jobId);
        assertThat(asking.registration()).isNull();
        final JobLifecycle.Joined restarted = lifecycle.join(rank("run", 1, 2, 40011), owner(), 40);
        assertThat(job.session).isNotEqualTo(before).isEqualTo(41);
        assertThat(job.running).isFalse();
        assertThat(job.needsInstall()).as("reprogrammed at once").isTrue();
        assertThat(restarted.registration().session).isEqualTo(41);
        assertThatThrownBy(() -> lifecycle.poll(r0.registration().id, owner()))
            .hasMessageContaining("moved to session 41")
            .satisfies(e -> assertThat(reasonOf(e)).isEqualTo(Refusal.Reason.GONE));
    }

    @Test
    void shouldLoseRanksWhoseLeasesRanOutAndRetireTheJobWithTheLast()
    {
        lifecycle(64);
        final JobLifecycle.Joined r0 = join(rank("run", 0, 2, 40000));
        join(rank("run", 1, 2, 40001));
        now.addAndGet(LEASE_MS / 2);
        lifecycle.renew(r0.registration().id, owner());
        now.addAndGet(LEASE_MS / 2 + 1);
        final JobLifecycle.Swept one = lifecycle.sweep();
        assertThat(one.lost()).isEqualTo(1);
        assertThat(one.retired()).isEmpty();
        now.addAndGet(LEASE_MS);
        final JobLifecycle.Swept last = lifecycle.sweep();
        assertThat(last.retired()).extracting(job -> job.name).containsExactly("run");
        assertThat(lifecycle.jobCount()).isZero();
        assertThat(lifecycle.freeSlots()).as("held until the switch drops the job").isEqualTo(48);
    }

    @Test
    void shouldMakeASecretForTheFirstRankThatBringsNone()
    {
        lifecycle(64);
        final JobLifecycle.Joined first = lifecycle.join(rank("run", 0, 2, 40000),
            new Caller(false, null, InetAddress.getLoopbackAddress()), JobLifecycle.NOT_ASKED);
        assertThat(first.newSecret()).isNotNull();
        final Caller holder = new Caller(false, first.newSecret(), InetAddress.getLoopbackAddress());
        assertThat(lifecycle.job("run", holder).registered()).isEqualTo(1);
        assertThat(lifecycle.jobs(new Caller(false, null, InetAddress.getLoopbackAddress())).jobs())
            .as("a stranger sees none").isEmpty();
    }
}
