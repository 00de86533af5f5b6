package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.services.http.JsonHttp;

/**
 * The records of the controller's {@link Journal}, one JSON object a line, each a few hundred bytes whatever the
 * job's world size: a job's membership is written once, a rank a line, and a change writes the lines it changes.
 * <pre>
 * {"type":"job",  "nextSession":8, "name":"run-42", "jobId":3, "world":4, "dtype":"int32", "elements":10000,
 *                 "slotBase":16, "slots":16, "lanes":256, "session":7, "running":true, "secretSha256":"..."}
 *     admitted, or its session or running state changed (no ranks: those are "rank" lines)
 * {"type":"rank", "name":"run-42", "jobId":3, "rank":1, "source":"10.0.0.2:40001",
 *                 "registration":{"id":"...", "source":"10.0.0.2:40001", "session":7, "incarnation":"..."}}
 *     a rank registered ("registration") or its registration ended (null); "source" is its latest, kept after
 * {"type":"freed", "name":"run-42", "jobId":3, "nextSession":8}
 *     the job ended and the switch no longer holds it
 * </pre>
 * A compaction writes each live job's "job" line and one "rank" line per rank that ever registered. {@link Replay}
 * folds the lines back into the live jobs; it also reads the journals of earlier versions, whose "job" lines carried
 * "sources" and "ranks" arrays with the whole membership.
 */
final class JournalRecords
{
    private JournalRecords()
    {
    }

    static ObjectNode job(final ControlledJob job, final int nextSession)
    {
        return JsonHttp.MAPPER.createObjectNode().put("type", "job").put("nextSession", nextSession)
            .put("name", job.name).put("jobId", job.jobId).put("world", job.world).put("dtype", job.dtype)
            .put("elements", job.elements).put("slotBase", job.slotBase).put("slots", job.slots)
            .put("lanes", job.lanes).put("session", job.session).put("running", job.running)
            .put("secretSha256", job.secretHash);
    }

    static ObjectNode rank(final ControlledJob job, final int rank)
    {
        final ObjectNode record = JsonHttp.MAPPER.createObjectNode().put("type", "rank").put("name", job.name)
            .put("jobId", job.jobId).put("rank", rank);
        if (job.lastSource[rank] != null)
        {
            record.put("source", JsonHttp.format(job.lastSource[rank]));
        }
        // the rank's JOIN credential as installed on the switch (docs/security.md): the journal is private (0600)
        record.put("joinCredential", JobSecret.formatCredential(job.lastCredential[rank]));
        final Registration registration = job.ranks[rank];
        if (registration == null)
        {
            record.putNull("registration");
        }
        else
        {
            final ObjectNode r = record.putObject("registration").put("id", registration.id)
                .put("source", JsonHttp.format(registration.source)).put("session", registration.session)
                .put("joinCredential", JobSecret.formatCredential(registration.joinCredential));
            if (registration.incarnation != null)
            {
                r.put("incarnation", registration.incarnation);
            }
        }
        return record;
    }

    static ObjectNode freed(final String name, final int jobId, final int nextSession)
    {
        return JsonHttp.MAPPER.createObjectNode().put("type", "freed").put("name", name).put("jobId", jobId)
            .put("nextSession", nextSession);
    }

    /** The live state as few lines as it takes: each job, then each rank that ever registered. */
    static List<ObjectNode> snapshot(final Collection<ControlledJob> jobs, final int nextSession)
    {
        final List<ObjectNode> records = new ArrayList<>();
        for (final ControlledJob job : jobs)
        {
            records.add(job(job, nextSession));
            for (int rank = 0; rank < job.world; rank++)
            {
                if (job.lastSource[rank] != null || job.ranks[rank] != null)
                {
                    records.add(rank(job, rank));
                }
            }
        }
        if (records.isEmpty())
        {
            records.add(freed("", 0, nextSession));
        }
        return records;
    }

    /** A job as the journal left it: its "job" line and its ranks' latest lines (null where none). */
    record Recovered(ObjectNode header, ObjectNode[] ranks)
    {
    }

    /**
     * Folds journal lines, oldest first, into the live jobs. Lines that do not fit (a rank of an unknown job or out of
     * its world, a world out of range) are counted and skipped: the journal is the controller's own file, and one bad
     * line must not keep it from starting.
     */
    static final class Replay
    {
        private final Map<String, Recovered> jobs = new LinkedHashMap<>();
        private int nextSession = 1;
        private int skipped;

        void accept(final ObjectNode record)
        {
            final int next = record.path("nextSession").asInt(0);
            if (next >= 1 && next <= 0xFFFF)
            {
                nextSession = Math.max(nextSession, next);
            }
            final String name = record.path("name").asText();
            switch (record.path("type").asText())
            {
                case "job" -> header(name, record);
                case "rank" -> rank(name, record);
                case "freed" ->
                {
                    final Recovered job = jobs.get(name);
                    if (job != null && (!record.has("jobId")
                        || record.path("jobId").asInt() == job.header().path("jobId").asInt()))
                    {
                        jobs.remove(name);
                    }
                }
                default -> skipped++;
            }
        }

        private void header(final String name, final ObjectNode record)
        {
            final int world = record.path("world").asInt();
            if (world < 1 || world > 0xFFFF)
            {
                skipped++;
                return;
            }
            final Recovered before = jobs.remove(name);
            final boolean same = before != null && before.ranks().length == world
                && before.header().path("jobId").asInt() == record.path("jobId").asInt();
            final Recovered job = new Recovered(record, same ? before.ranks() : new ObjectNode[world]);
            jobs.put(name, job);
            if (record.path("ranks").isArray()) // an earlier version's line: the whole membership
            {
                final Iterator<JsonNode> sources = record.path("sources").iterator();
                final Iterator<JsonNode> ranks = record.path("ranks").iterator();
                for (int rank = 0; rank < world && sources.hasNext() && ranks.hasNext(); rank++)
                {
                    final ObjectNode line = JsonHttp.MAPPER.createObjectNode().put("rank", rank);
                    final JsonNode source = sources.next();
                    if (source.isTextual())
                    {
                        line.put("source", source.asText());
                    }
                    line.set("registration", ranks.next());
                    job.ranks()[rank] = line;
                }
            }
        }

        private void rank(final String name, final ObjectNode record)
        {
            final Recovered job = jobs.get(name);
            final int rank = record.path("rank").asInt(-1);
            if (job == null || rank < 0 || rank >= job.ranks().length
                || record.path("jobId").asInt() != job.header().path("jobId").asInt())
            {
                skipped++;
                return;
            }
            job.ranks()[rank] = record;
        }

        Collection<Recovered> jobs()
        {
            return jobs.values();
        }

        int nextSession()
        {
            return nextSession;
        }

        int skipped()
        {
            return skipped;
        }
    }

    /** The source a "rank" line names, or null. */
    static InetSocketAddress source(final JsonNode line)
    {
        return line.hasNonNull("source") ? JsonHttp.address("source", line.path("source").asText()) : null;
    }
}
