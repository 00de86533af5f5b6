package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.JsonHttp;
import org.inagg.wire.InaggHeader;

/**
 * The job lifecycle's changes on disk and back: each change as its {@link JournalRecords} line in the {@link Journal},
 * compactions to the live state, and at start the jobs the journal left, rebuilt ({@link #recover}). The lifecycle
 * speaks in jobs and ranks; the JSON of the lines stays here. Not thread-safe: {@link JobLifecycle} calls it under its
 * lock.
 */
final class JobJournal implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(JobJournal.class.getName());

    private final Journal journal;

    JobJournal(final Journal journal)
    {
        this.journal = journal;
    }

    /**
     * The jobs a journal left and the session counter it reached.
     *
     * @param jobs        the jobs rebuilt, in journal order, leases starting afresh; their slots not yet reserved.
     * @param nextSession the next session to issue.
     */
    record Recovered(List<ControlledJob> jobs, int nextSession)
    {
    }

    /** A job was admitted, or its session or running state changed. @throws java.io.UncheckedIOException if not. */
    void job(final ControlledJob job, final int nextSession)
    {
        journal.append(JournalRecords.job(job, nextSession));
    }

    /** A rank registered or its registration ended. @throws java.io.UncheckedIOException if not written. */
    void rank(final ControlledJob job, final int rank)
    {
        journal.append(JournalRecords.rank(job, rank));
    }

    /** The job ended and the switch no longer holds it. @throws java.io.UncheckedIOException if not written. */
    void freed(final ControlledJob job, final int nextSession)
    {
        journal.append(JournalRecords.freed(job.name, job.jobId, nextSession));
    }

    /** Compacts to {@code live} if enough lines were appended since the last compaction; never throws. */
    void compactIfDue(final Supplier<List<ControlledJob>> live, final int nextSession)
    {
        journal.compactIfDue(() -> JournalRecords.snapshot(live.get(), nextSession));
    }

    /** Compacts to {@code live} now (after recovery); a failure is logged, not thrown. */
    void compactNow(final List<ControlledJob> live, final int nextSession)
    {
        journal.tryCompact(JournalRecords.snapshot(live, nextSession));
    }

    /**
     * Rebuilds the jobs the journal holds; a job whose header is out of range is dropped (logged), as are lines that
     * fit no job.
     *
     * @param poolSlots the switch's pool: a job's slot range must lie in it.
     * @param nowMs     the clock now: every lease starts afresh.
     * @param leaseMs   the lease.
     */
    Recovered recover(final int poolSlots, final long nowMs, final long leaseMs)
    {
        final JournalRecords.Replay replay = new JournalRecords.Replay();
        journal.replay(replay::accept);
        if (replay.skipped() > 0)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: journal " + journal.path() + ": "
                + replay.skipped() + " lines that fit no job skipped");
        }
        final List<ControlledJob> jobs = new ArrayList<>();
        for (final JournalRecords.Recovered recovered : replay.jobs())
        {
            try
            {
                jobs.add(rebuild(recovered, poolSlots, nowMs + leaseMs));
            }
            catch (final RuntimeException ex)
            {
                LOGGER.log(System.Logger.Level.WARNING, () -> "controller: journal: job '"
                    + recovered.header().path("name").asText() + "' cannot be rebuilt (" + ex.getMessage()
                    + "); job dropped");
            }
        }
        return new Recovered(jobs, replay.nextSession());
    }

    /** @throws IllegalArgumentException naming the field of a header out of range. */
    private static ControlledJob rebuild(final JournalRecords.Recovered recovered, final int poolSlots,
        final long leaseDeadlineMs)
    {
        final ObjectNode record = recovered.header();
        requireField(record, "jobId", 1, InaggHeader.MAX_JOB_ID);
        requireField(record, "session", 1, 0xFFFF);
        requireField(record, "slots", 1, poolSlots);
        requireField(record, "slotBase", 0, poolSlots - 1);
        requireField(record, "lanes", 1, InaggHeader.MAX_ELEMENTS_FOR_1500_MTU);
        requireField(record, "elements", 1, Integer.MAX_VALUE);
        final ControlledJob job = new ControlledJob(record.path("name").asText(), record.path("jobId").asInt(),
            record.path("world").asInt(), record.path("dtype").asText(), record.path("elements").asLong(),
            record.path("slotBase").asInt(), record.path("slots").asInt(), record.path("lanes").asInt(),
            record.path("session").asInt(), record.hasNonNull("secretSha256")
            ? record.path("secretSha256").asText() : null);
        job.running = record.path("running").asBoolean();
        for (int rank = 0; rank < job.world; rank++)
        {
            final ObjectNode line = recovered.ranks()[rank];
            if (line == null)
            {
                continue;
            }
            job.lastSource[rank] = JournalRecords.source(line);
            // a journal of before JOIN credentials: a fresh one, which no process knows yet (safe: never "none")
            job.lastCredential[rank] = credential(line);
            final JsonNode r = line.path("registration");
            if (r.isObject())
            {
                final InetSocketAddress source = JsonHttp.address("source", r.path("source").asText());
                job.ranks[rank] = new Registration(r.path("id").asText(), job.name, rank, source,
                    r.hasNonNull("incarnation") ? r.path("incarnation").asText() : null, r.path("session").asInt(),
                    leaseDeadlineMs, credential(r));
                job.lastCredential[rank] = job.ranks[rank].joinCredential;
                if (job.lastSource[rank] == null)
                {
                    job.lastSource[rank] = source;
                }
            }
        }
        for (int rank = 0; rank < job.world && job.running; rank++)
        {
            job.running = job.lastSource[rank] != null; // a running job knows every rank's source; else it waits
        }
        return job;
    }

    /** The {@code joinCredential} of a journal line, or a fresh one where it has none (an earlier version's). */
    private static long credential(final JsonNode line)
    {
        return line.hasNonNull("joinCredential")
            ? JobSecret.parseCredential("joinCredential", line.path("joinCredential").asText())
            : JobSecret.joinCredential();
    }

    private static void requireField(final ObjectNode record, final String field, final long min, final long max)
    {
        final JsonNode value = record.path(field);
        if (!value.canConvertToLong() || value.asLong() < min || value.asLong() > max)
        {
            throw new IllegalArgumentException("field '" + field + "' must be in " + min + ".." + max + ", got "
                + value);
        }
    }

    String path()
    {
        return journal.path().toString();
    }

    @Override
    public void close()
    {
        journal.close();
    }
}
