package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;

/**
 * Fuzzes the controller's journal replay ({@link Journal#replay}, {@link JournalRecords.Replay} and
 * {@link JobRegistry#recover}, docs/fuzzing.md): whatever the file holds (torn lines, lines of other versions, fields
 * out of range), recovery does not throw; it keeps only jobs within bounds, answers as before, and a compaction
 * after it recovers the same jobs again.
 */
class JournalFuzzTest
{
    private static final int POOL_SLOTS = 256;

    @FuzzTest(maxDuration = "10s")
    void shouldRecoverFromAnyJournalOnlyJobsWithinBoundsAndTheSameAfterCompaction(final byte[] journal)
        throws IOException
    {
        final Path dir = Files.createTempDirectory("inagg-journal-fuzz");
        try
        {
            final Path file = dir.resolve("journal");
            Files.write(file, journal);
            final FakeSwitch fake = new FakeSwitch();
            final int jobs;
            final String listing;
            try (JobRegistry registry = registry(fake, file))
            {
                jobs = registry.recover();
                assertThat(jobs).isBetween(0, POOL_SLOTS);
                listing = registry.jobs(Caller.embedded()).toString();
                for (final var job : registry.jobs(Caller.embedded()).path("jobs"))
                {
                    assertThat(job.path("jobId").asInt()).isBetween(1, 0xFFFF);
                    assertThat(job.path("world").asInt()).isBetween(1, 0xFFFF);
                    assertThat(job.path("slotBase").asInt() + job.path("slots").asInt()).isBetween(1, POOL_SLOTS);
                }
                // a new job still gets in where the pool has room
                if (registry.freeSlots() > 0)
                {
                    try
                    {
                        final JsonHttp.Answer answer = registry.register(new RegisterRequest("fuzz-new-job", 0, 1,
                            "int32", 1, new InetSocketAddress("127.0.0.1", 40000), 1, null));
                        assertThat(answer.status()).isIn(200, 202);
                    }
                    catch (final HttpFailure e)
                    {
                        assertThat(e.status()).as(e.getMessage()).isEqualTo(HttpFailure.CONFLICT); // a journaled namesake
                    }
                }
            }
            try (JobRegistry again = registry(new FakeSwitch(), file))
            {
                assertThat(again.recover()).as("the compacted journal: " + listing).isGreaterThanOrEqualTo(jobs);
            }
        }
        finally
        {
            try (var files = Files.list(dir))
            {
                for (final Path path : files.toList())
                {
                    Files.deleteIfExists(path);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private static JobRegistry registry(final FakeSwitch fake, final Path file)
    {
        return new JobRegistry(fake, Journal.open(file), new SlotAllocator(POOL_SLOTS), () -> 1_000_000L, 1000, 256,
            16, false);
    }
}
