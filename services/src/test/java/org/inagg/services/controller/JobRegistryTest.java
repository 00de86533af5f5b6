package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Admission, slots, sessions, leases and the journal of {@link JobRegistry}, on a fake switch and a fake clock. */
class JobRegistryTest
{
    private static final long LEASE_MS = 1000;

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_000_000);
    private final FakeSwitch fake = new FakeSwitch();

    private JobRegistry registry(final int poolSlots)
    {
        final JobRegistry registry = new JobRegistry(fake, Journal.open(dir.resolve("journal")),
            new SlotAllocator(poolSlots), now::get, LEASE_MS, 256, 16, false);
        registry.recover();
        return registry;
    }

    private static RegisterRequest rank(final String name, final int rank, final int world, final int port)
    {
        return new RegisterRequest(name, rank, world, "int32", 10_000, new InetSocketAddress("127.0.0.1", port), 0,
            null);
    }

    private static String id(final JsonHttp.Answer answer)
    {
        return answer.body().path("registration").asText();
    }

    @Test
    @Timeout(10)
    void shouldAdmitAJobAndProgramTheSwitchOnlyOnceEveryRankRegistered()
    {
        final JobRegistry registry = registry(64);
        final JsonHttp.Answer first = registry.register(rank("run-42", 1, 3, 40001));
        assertThat(first.status()).isEqualTo(202);
        assertThat(first.body().path("missing").toString()).isEqualTo("[0,2]");
        registry.register(rank("run-42", 0, 3, 40000));
        assertThat(fake.installs).isEmpty();
        final JsonHttp.Answer last = registry.register(rank("run-42", 2, 3, 40002));
        assertThat(last.status()).isEqualTo(200);
        assertThat(last.body().path("state").asText()).isEqualTo("ready");
        assertThat(last.body().path("workerId").asInt()).isEqualTo(2);
        assertThat(last.body().path("switch").asText()).isEqualTo("127.0.0.1:9000");
        assertThat(fake.installs).hasSize(1);
        final JobProgram program = fake.installs.getFirst();
        assertThat(program.sources()).extracting(InetSocketAddress::getPort).containsExactly(40000, 40001, 40002);
        assertThat(program.slots()).as("ceil(10000 / 256) capped at 16").isEqualTo(16);
        assertThat(program.session()).isEqualTo(last.body().path("session").asInt()).isPositive();
        assertThat(registry.status(id(first), Caller.embedded()).status()).as("the first rank learns it on its next poll")
            .isEqualTo(200);

        final JsonHttp.Answer other = registry.register(rank("other", 0, 1, 40010));
        assertThat(other.body().path("jobId").asInt()).isNotEqualTo(program.jobId());
        assertThat(fake.installs.getLast().slotBase()).as("non-overlapping").isEqualTo(16);
        assertThat(other.body().path("session").asInt()).isNotEqualTo(program.session());
    }

    @Test
    @Timeout(10)
    void shouldRefuseRanksThatDisagreeWithTheJobWith409NamingBothValues()
    {
        final JobRegistry registry = registry(64);
        registry.register(rank("run-42", 0, 4, 40000));
        assertThatThrownBy(() -> registry.register(rank("run-42", 1, 3, 40001)))
            .isInstanceOf(HttpFailure.class).hasMessageContaining("world size 3").hasMessageContaining("admitted with 4")
            .satisfies(e -> assertThat(((HttpFailure)e).status()).isEqualTo(409));
        assertThatThrownBy(() -> registry.register(new RegisterRequest("run-42", 1, 4, "float32", 10_000,
            new InetSocketAddress("127.0.0.1", 40001), 0, null))).hasMessageContaining("dtype float32");
    }

    @Test
    @Timeout(10)
    void shouldAnswer503WhenThePoolHasNoRangeLeftAndAdmitAgainOnceAJobIsFreed()
    {
        final JobRegistry registry = registry(20);
        final String a = id(registry.register(rank("a", 0, 1, 40000)));
        assertThatThrownBy(() -> registry.register(rank("b", 0, 1, 40001)))
            .isInstanceOf(HttpFailure.class).hasMessageContaining("no free slots for job 'b'")
            .satisfies(e -> assertThat(((HttpFailure)e).status()).isEqualTo(503));
        assertThat(registry.release(a, Caller.embedded()).body().path("jobFreed").asBoolean()).isTrue();
        assertThat(fake.jobs).isEmpty();
        assertThat(registry.register(rank("b", 0, 1, 40001)).status()).isEqualTo(200);
    }

    @Test
    @Timeout(10)
    void shouldStartANewSessionWhenARankOfARunningJobRegistersAgain()
    {
        final JobRegistry registry = registry(64);
        final String r0 = id(registry.register(rank("run", 0, 2, 40000)));
        registry.register(rank("run", 1, 2, 40001));
        final int first = fake.installs.getLast().session();

        final JsonHttp.Answer again = registry.register(rank("run", 1, 2, 40011)); // rank 1 restarted
        assertThat(again.status()).isEqualTo(202);
        final JobProgram reprogrammed = fake.installs.getLast();
        assertThat(reprogrammed.session()).as("reprogrammed at once").isNotEqualTo(first);
        assertThat(reprogrammed.sources()).as("rank 0's old source stays, to be told it is stale")
            .extracting(InetSocketAddress::getPort).containsExactly(40000, 40011);
        assertThatThrownBy(() -> registry.renew(r0, Caller.embedded())).isInstanceOf(HttpFailure.class)
            .hasMessageContaining("moved to session " + reprogrammed.session());

        final JsonHttp.Answer back = registry.register(rank("run", 0, 2, 40010));
        assertThat(back.status()).isEqualTo(200);
        assertThat(back.body().path("session").asInt()).isEqualTo(reprogrammed.session());
        assertThat(fake.installs.getLast().sources()).extracting(InetSocketAddress::getPort)
            .containsExactly(40010, 40011);
        assertThat(fake.installs.getLast().session()).isEqualTo(reprogrammed.session());
        assertThatThrownBy(() -> registry.release(r0, Caller.embedded())).as("replaced by rank 0's new registration")
            .isInstanceOf(HttpFailure.class).satisfies(e -> assertThat(((HttpFailure)e).status()).isEqualTo(404));
        assertThat(registry.jobCount()).isEqualTo(1);
    }

    @Test
    @Timeout(10)
    void shouldAnswerARepeatedRegistrationOfTheSameProcessWithoutANewSession()
    {
        final JobRegistry registry = registry(64);
        final RegisterRequest once = new RegisterRequest("run", 0, 1, "int32", 10, new InetSocketAddress("127.0.0.1",
            40000), 0, "abc");
        final String id = id(registry.register(once));
        final int installs = fake.installs.size();
        assertThat(id(registry.register(once))).isEqualTo(id);
        assertThat(fake.installs).hasSize(installs);
    }

    @Test
    @Timeout(10)
    void shouldFreeTheJobAndItsSlotsWhenEveryLeaseExpires()
    {
        final JobRegistry registry = registry(64);
        final String r0 = id(registry.register(rank("run", 0, 2, 40000)));
        registry.register(rank("run", 1, 2, 40001));
        now.addAndGet(LEASE_MS / 2);
        registry.renew(r0, Caller.embedded());
        now.addAndGet(LEASE_MS / 2 + 1);
        assertThat(registry.sweep()).as("rank 1 lost, rank 0 renewed").isEqualTo(1);
        assertThat(registry.jobCount()).isEqualTo(1);
        assertThat(fake.jobs).hasSize(1);
        now.addAndGet(LEASE_MS);
        assertThat(registry.sweep()).isEqualTo(1);
        assertThat(registry.jobCount()).isZero();
        assertThat(fake.jobs).isEmpty();
        assertThat(registry.freeSlots()).isEqualTo(64);
        assertThatThrownBy(() -> registry.status(r0, Caller.embedded())).isInstanceOf(HttpFailure.class).hasMessageContaining("gone");
    }

    @Test
    @Timeout(10)
    void shouldRebuildItsStateFromTheJournalAndInstallAgainWhatTheSwitchLost() throws Exception
    {
        JobRegistry registry = registry(64);
        final String r0 = id(registry.register(rank("run", 0, 2, 40000)));
        final String r1 = id(registry.register(rank("run", 1, 2, 40001)));
        final String gone = id(registry.register(rank("ended", 0, 1, 40002)));
        registry.release(gone, Caller.embedded());
        final JobProgram running = fake.installs.stream().filter(p -> p.workers() == 2).findFirst().orElseThrow();
        registry.close();

        // the switch restarted too and lost the job; a job someone else installed holds slots 32..39
        fake.jobs.clear();
        fake.jobs.put(9, new JobProgram(9, 8, 32, 256, 3, List.of()));
        fake.installs.clear();
        registry = registry(64);
        assertThat(registry.jobCount()).isEqualTo(1);
        assertThat(fake.installs).containsExactly(running);
        assertThat(registry.status(r0, Caller.embedded()).status()).isEqualTo(200);
        assertThat(registry.renew(r1, Caller.embedded()).status()).isEqualTo(200);
        final JsonHttp.Answer next = registry.register(rank("next", 0, 1, 40003));
        assertThat(next.body().path("jobId").asInt()).as("never the foreign job's id").isNotEqualTo(9)
            .isNotEqualTo(running.jobId());
        assertThat(fake.installs.getLast().slotBase()).isEqualTo(16);
        final JsonHttp.Answer big = registry.register(new RegisterRequest("big", 0, 1, "int32", 10, new
            InetSocketAddress("127.0.0.1", 40004), 16, null));
        assertThat(fake.installs.getLast().slotBase()).as("skips the foreign 32..39").isEqualTo(40);
        assertThat(big.status()).isEqualTo(200);
        registry.close();
        assertThat(Files.readAllLines(dir.resolve("journal"))).allSatisfy(line -> assertThat(line).startsWith("{"));
    }

    @Test
    @Timeout(30)
    void shouldRecoverALargeJobFromAJournalOfTheEarlierVersionWhoseLinesHeldTheWholeMembership() throws Exception
    {
        final int world = 3000; // a line of about 200 KB
        final com.fasterxml.jackson.databind.node.ObjectNode line = JsonHttp.MAPPER.createObjectNode().put("type", "job")
            .put("nextSession", 9).put("name", "old").put("jobId", 5).put("world", world).put("dtype", "int32")
            .put("elements", 10_000).put("slotBase", 0).put("slots", 16).put("lanes", 256).put("session", 8)
            .put("running", true).putNull("secretSha256");
        final com.fasterxml.jackson.databind.node.ArrayNode sources = line.putArray("sources");
        final com.fasterxml.jackson.databind.node.ArrayNode ranks = line.putArray("ranks");
        for (int rank = 0; rank < world; rank++)
        {
            sources.add("127.0.0.1:" + (20_000 + rank));
            ranks.addObject().put("id", "id-" + rank).put("source", "127.0.0.1:" + (20_000 + rank)).put("session", 8);
        }
        Files.writeString(dir.resolve("journal"), line + "\n");
        final JobRegistry registry = registry(64);
        assertThat(registry.jobCount()).isEqualTo(1);
        assertThat(registry.job("old", Caller.embedded()).path("registered").asInt()).isEqualTo(world);
        assertThat(registry.renew("id-2999", Caller.embedded()).body().path("session").asInt()).isEqualTo(8);
        assertThat(registry.register(rank("new", 0, 1, 40000)).body().path("session").asInt())
            .as("sessions go on from the journal's counter").isEqualTo(9);
        registry.close();
        assertThat(Files.readAllLines(dir.resolve("journal"))).as("compacted into this version's short lines")
            .allSatisfy(text -> assertThat(text.length()).isLessThan(1024));
    }
}
