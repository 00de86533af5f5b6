package org.inagg.services.agent;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * One job's ranks on this host: their shared-memory file, their requests, the rounds. Runs on the agent's thread only
 * (the switch stage posts its completions back to it).
 * <p>
 * Round errors (sizes, ops or types that differ between the ranks, NaN or infinity) fail that round on every rank
 * and leave the job usable. Job errors (a rank that leaves while others are in a round, a malformed request, the
 * switch stage) fail the job: every rank gets the error, its connection is closed and the file is removed. So does
 * a round that waits longer than the job's collective timeout for a local rank to ring after the first one did
 * ({@link #expire}): a rank that hangs, alive, frees the job within that bound, and the others learn which rank it is.
 * The same bound holds while the ranks copy a round in chunk by chunk ({@link RoundPipeline}), from the last chunk any
 * of them copied.
 */
final class JobSession implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(JobSession.class.getName());

    final String key;
    private final int worldSize;
    private final int localWorldSize;
    private final int hosts;
    private final SharedRegion region;
    private final RankConnection[] members;
    private final NetworkStage network;
    private final RoundPipeline pipeline;
    private final HostAgentCounters counters;
    private final long defaultTimeoutNs;
    private long collectiveTimeoutNs = Long.MAX_VALUE;
    private RankConnection firstToRing;
    private long firstRangNs;
    private long progressNs;
    private int joined;
    private int requested;
    private boolean closed;
    private long rounds;
    /** Why a rank that joins from now on could not run: a rank left before every local rank joined (null: none did). */
    private String endedEarly;
    /** Elements of the chunks ranks copy a SUM or AVG round in (0: whole rounds), as the shared file's header says. */
    private final int chunkElements;

    /**
     * @param chunkBytes bytes of the chunks a sum's round is copied in, summed and staged in ({@link RoundPipeline});
     *                   0: whole rounds.
     * @param networkChunkBytes bytes of the chunks a sum goes through the switch in (0: the round whole).
     */
    JobSession(final Hello first, final Path file, final long slotBytes, final long chunkBytes,
        final long networkChunkBytes, final InHostReducer reducer, final NetworkStage network, final HostAgentCounters counters,
        final Consumer<Runnable> post, final Duration defaultCollectiveTimeout)
    {
        this.defaultTimeoutNs = defaultCollectiveTimeout.toNanos();
        this.key = first.jobKey();
        this.worldSize = first.worldSize();
        this.localWorldSize = first.localWorldSize();
        this.hosts = first.hosts();
        this.network = network;
        this.counters = counters;
        this.chunkElements = (int)(Math.min(chunkBytes, slotBytes) / AgentProtocol.elementBytes(0));
        this.region = SharedRegion.create(file, localWorldSize, worldSize, slotBytes, key, chunkElements,
            (int)networkChunkBytes);
        this.members = new RankConnection[localWorldSize];
        final MemorySegment[] inputs = new MemorySegment[localWorldSize];
        for (int i = 0; i < localWorldSize; i++)
        {
            inputs[i] = region.data(i);
        }
        this.pipeline = new RoundPipeline(inputs, region.result(), members, reducer, network, post, new Outcome(),
            worldSize, ranksPerHost(), chunkElements, networkChunkBytes / 4);
        counters.jobsStarted.increment();
        counters.jobsActive.increment();
        LOG.log(Level.INFO, "job {0}: started, {1} local ranks of {2} on {3} host(s), shared memory {4} ({5} bytes a "
            + "slot, {6})", key, localWorldSize, worldSize, hosts, file, slotBytes,
            chunkElements == 0 ? "whole rounds" : "rounds in chunks of " + chunkElements * AgentProtocol.elementBytes(0)
                + " bytes");
    }

    SharedRegion region()
    {
        return region;
    }

    boolean isClosed()
    {
        return closed;
    }

    /**
     * Why the job can never run, once it failed, or its joined ranks all left (one of them without a bye), before all
     * its local ranks joined (a rank cannot join twice, so the ones still to come could never sum with it); null
     * otherwise. The agent answers a late rank of the
     * job with it instead of a fresh job that would wait for a rank that already gave up.
     */
    String endedEarly()
    {
        return endedEarly;
    }

    /** Adds a rank; throws {@link AgentProtocolException} when it does not fit the job. */
    void join(final RankConnection connection, final Hello hello)
    {
        if (hello.worldSize() != worldSize || hello.localWorldSize() != localWorldSize || hello.hosts() != hosts)
        {
            throw new AgentProtocolException(AgentProtocol.ERROR_WORLD_MISMATCH, "rank " + hello.rank()
                + " says world size " + hello.worldSize() + ", " + hello.localWorldSize() + " local ranks, "
                + hello.hosts() + " hosts, but job " + key + " has " + worldSize + ", " + localWorldSize + ", "
                + hosts);
        }
        final RankConnection other = members[hello.localRank()];
        if (other != null)
        {
            throw new AgentProtocolException(AgentProtocol.ERROR_WORLD_MISMATCH, "local rank " + hello.localRank()
                + " joined job " + key + " twice: " + other.describe() + " and rank " + hello.rank() + " (pid "
                + hello.pid() + ")");
        }
        members[hello.localRank()] = connection;
        // The job's bound is the shortest any of its ranks asked for (they all derive it from the same settings).
        collectiveTimeoutNs = Math.min(collectiveTimeoutNs, hello.collectiveTimeoutMs() > 0
            ? hello.collectiveTimeoutMs() * 1_000_000L : defaultTimeoutNs);
        connection.session = this;
        connection.identity = hello;
        joined++;
        counters.ranksConnected.increment();
    }

    /** A rank rang {@link AgentProtocol#DOORBELL_REQUEST}. */
    void onRequest(final RankConnection connection)
    {
        if (closed)
        {
            return;
        }
        final int localRank = connection.identity.localRank();
        final CollectiveRequest request;
        try
        {
            if (connection.pending != null)
            {
                throw new AgentProtocolException(AgentProtocol.ERROR_BAD_REQUEST, connection.describe()
                    + " rang twice for round " + connection.pending.sequence());
            }
            request = RequestDecoder.decodeRequest(region.descriptor(localRank), connection.completed + 1,
                region.slotCapacity());
            connection.bells = 1;
            connection.ready = Math.min(RequestDecoder.decodeReady(region.descriptor(localRank), request, 0),
                RequestDecoder.announcedReady(request, chunkElements, connection.bells));
        }
        catch (final AgentProtocolException ex)
        {
            fail(ex.code(), connection.describe() + ": " + ex.getMessage());
            return;
        }
        final RankConnection gone = departed();
        if (gone != null)
        {
            connection.pending = request;
            fail(AgentProtocol.ERROR_RANK_LEFT, gone.describe() + " of job " + key
                + (gone.bye ? " left" : " disconnected (died?)") + " before all-reduce #" + request.sequence()
                + ", which cannot complete");
            return;
        }
        connection.pending = request;
        requested++;
        if (requested == 1)
        {
            firstToRing = connection;
            firstRangNs = System.nanoTime();
        }
        if (requested == localWorldSize)
        {
            runRound();
        }
    }

    /** A rank rang {@link AgentProtocol#DOORBELL_PROGRESS}: it copied more of its round in. */
    void onProgress(final RankConnection connection)
    {
        if (closed)
        {
            return;
        }
        if (connection.pending == null)
        {
            // The round ended (a round error) while the rank was still copying it in: its late chunks change nothing.
            // (Its descriptor may already hold its next request: a rank rings all of a round's chunks before that.)
            return;
        }
        try
        {
            connection.bells++;
            connection.ready = Math.min(RequestDecoder.decodeReady(region.descriptor(connection.identity.localRank()),
                connection.pending, connection.ready),
                RequestDecoder.announcedReady(connection.pending, chunkElements, connection.bells));
        }
        catch (final AgentProtocolException ex)
        {
            fail(ex.code(), connection.describe() + ": " + ex.getMessage());
            return;
        }
        progressNs = System.nanoTime();
        if (pipeline.active())
        {
            pipeline.advance(ready());
        }
    }

    /** Elements of the round in progress that every local rank has copied in. */
    private long ready()
    {
        long ready = Long.MAX_VALUE;
        for (final RankConnection member : members)
        {
            ready = Math.min(ready, member.ready);
        }
        return ready;
    }

    /**
     * When {@link #expire} fails the round in progress unless every local rank rang (and copied the round in); MAX_VALUE
     * when none waits.
     */
    long deadlineNs()
    {
        if (closed || requested == 0)
        {
            return Long.MAX_VALUE;
        }
        if (!pipeline.active())
        {
            return firstRangNs + collectiveTimeoutNs;
        }
        return pipeline.awaitingRanks() ? progressNs + collectiveTimeoutNs : Long.MAX_VALUE;
    }

    /** Fails the job if a round has waited past the collective timeout for local ranks that did not ring. */
    void expire(final long nowNs)
    {
        final long deadline = deadlineNs();
        if (deadline == Long.MAX_VALUE || nowNs - deadline < 0)
        {
            return;
        }
        final StringBuilder missing = new StringBuilder();
        final boolean copying = pipeline.active();
        int count = 0;
        for (int i = 0; i < localWorldSize; i++)
        {
            final RankConnection member = members[i];
            if (member == null || member.pending == null || copying && member.ready < member.pending.count())
            {
                if (++count <= 4)
                {
                    missing.append(count > 1 ? ", " : "").append(member == null
                        ? "local rank " + i + " (never joined)" : member.describe());
                }
            }
        }
        if (count > 4)
        {
            missing.append(" and ").append(count - 4).append(" more");
        }
        fail(AgentProtocol.ERROR_COLLECTIVE_TIMEOUT, "all-reduce #" + firstToRing.pending.sequence() + " of job "
            + key + ": " + missing + (copying ? " did not finish copying it in" : " did not submit it")
            + " within the collective timeout of " + seconds(collectiveTimeoutNs) + " s after "
            + (copying ? "the last chunk any rank copied" : firstToRing.describe() + " did")
            + " (hung, or busy elsewhere); the job is freed (INAGG_COLLECTIVE_TIMEOUT, "
            + "default the process group's timeout)");
    }

    private static String seconds(final long nanos)
    {
        return nanos % 1_000_000_000L == 0 ? Long.toString(nanos / 1_000_000_000L)
            : String.format(java.util.Locale.ROOT, "%.3f", nanos / 1e9);
    }

    private RankConnection departed()
    {
        for (final RankConnection member : members)
        {
            if (member != null && member.closed)
            {
                return member;
            }
        }
        return null;
    }

    private void runRound()
    {
        final CollectiveRequest first = members[0].pending;
        for (int i = 1; i < localWorldSize; i++)
        {
            final CollectiveRequest other = members[i].pending;
            if (other.count() != first.count() || other.total() != first.total())
            {
                completeRound(AgentProtocol.ERROR_SIZE_MISMATCH, "tensor sizes differ between ranks in all-reduce #"
                    + first.sequence() + ": rank " + members[0].identity.rank() + " has " + first.total()
                    + " elements, rank " + members[i].identity.rank() + " has " + other.total());
                return;
            }
            if (other.partElements() != first.partElements() || other.partRank() != first.partRank())
            {
                completeRound(AgentProtocol.ERROR_SIZE_MISMATCH, "ranks split round #" + first.sequence()
                    + " differently: rank " + members[0].identity.rank() + " into parts of " + first.partElements()
                    + " from rank " + first.partRank() + ", rank " + members[i].identity.rank() + " of "
                    + other.partElements() + " from rank " + other.partRank());
                return;
            }
            if (other.dtype() != first.dtype() || other.op() != first.op())
            {
                completeRound(AgentProtocol.ERROR_OP_MISMATCH, "ranks disagree in all-reduce #" + first.sequence()
                    + ": rank " + members[0].identity.rank() + " asks " + RoundPipeline.describe(first)
                    + ", rank " + members[i].identity.rank() + " asks " + RoundPipeline.describe(other));
                return;
            }
        }
        final String parts = partsProblem(first);
        if (parts != null)
        {
            completeRound(AgentProtocol.ERROR_BAD_REQUEST, parts);
            return;
        }
        progressNs = System.nanoTime();
        pipeline.begin(first);
        pipeline.advance(ready());
    }

    /** Ranks per host when every host has as many (the layout parts need); 0 otherwise. */
    private int ranksPerHost()
    {
        return worldSize == hosts * localWorldSize ? localWorldSize : 0;
    }

    /** Why the round's parts cannot be (null: they can, or the round has none). */
    private String partsProblem(final CollectiveRequest round)
    {
        if (round.partElements() == 0)
        {
            return null;
        }
        if (round.partRank() + round.parts() > worldSize)
        {
            return "round #" + round.sequence() + " has " + round.parts() + " parts from rank " + round.partRank()
                + ", past the world size " + worldSize;
        }
        if (hosts > 1)
        {
            final int perHost = ranksPerHost();
            for (final RankConnection member : members)
            {
                if (perHost == 0 || member.identity.rank() / perHost != member.identity.hostIndex())
                {
                    return "round #" + round.sequence() + " is split into parts, but the ranks are not laid out "
                        + perHost + " per host in rank order (rank " + member.identity.rank() + " is on host "
                        + member.identity.hostIndex() + " of " + hosts + ", world size " + worldSize + ")";
                }
            }
        }
        return null;
    }

    private void completeRound(final int status, final String message)
    {
        if (status == AgentProtocol.OK)
        {
            counters.rounds.increment();
            counters.bytesReduced.getAndAdd(members[0].pending.count() * 4);
        }
        else
        {
            counters.roundErrors.increment();
            LOG.log(Level.WARNING, "job {0}: {1}", key, message);
        }
        rounds++;
        for (final RankConnection member : members)
        {
            final long sequence = member.pending.sequence();
            region.complete(member.identity.localRank(), sequence, status, message);
            member.completed = sequence;
            member.pending = null;
            member.ready = 0;
            member.bells = 0;
        }
        requested = 0;
        for (final RankConnection member : members)
        {
            member.ringComplete();
        }
    }

    /** A rank's connection ended (after a bye, or because the process died). */
    void onLeave(final RankConnection connection)
    {
        connection.close();
        if (closed)
        {
            return;
        }
        counters.ranksConnected.decrement();
        if (requested > 0)
        {
            fail(AgentProtocol.ERROR_RANK_LEFT, connection.describe() + " of job " + key
                + (connection.bye ? " left" : " disconnected (died?)") + " in the middle of all-reduce #"
                + (connection.completed + 1));
            return;
        }
        for (final RankConnection member : members)
        {
            if (member != null && !member.closed)
            {
                return;
            }
        }
        LOG.log(Level.INFO, "job {0}: ended after {1} rounds ({2} of {3} local ranks joined), shared memory {4} "
            + "removed", key, rounds, joined, localWorldSize, region.path());
        if (joined < localWorldSize && !connection.bye)
        {
            // A rank that said bye ended a group it did not use (one never used may be torn down before a slower local
            // rank builds it: that rank still gets its job); one that vanished gave up, and the job cannot run.
            endedEarly = connection.describe() + " of job " + key + " disconnected (died?) before every local rank"
                + " joined (" + joined + " of " + localWorldSize + " did), so the job cannot run; create a new process"
                + " group";
        }
        close();
    }

    /** Fails the job: every rank still connected gets {@code message}, is disconnected, and the file goes. */
    void fail(final int code, final String message)
    {
        if (closed)
        {
            return;
        }
        counters.jobsFailed.increment();
        LOG.log(Level.WARNING, "job {0}: failed, freeing it: {1}", key, message);
        if (joined < localWorldSize)
        {
            // The reply's message holds 288 bytes: the advice first, the failure's own text after it.
            endedEarly = "job " + key + " failed before every local rank joined (" + joined + " of " + localWorldSize
                + " did), so the job cannot run; create a new process group. It failed: " + message;
        }
        for (final RankConnection member : members)
        {
            if (member != null && !member.closed)
            {
                final long sequence = member.pending != null ? member.pending.sequence() : member.completed + 1;
                region.complete(member.identity.localRank(), sequence, code, message);
                member.ringComplete();
            }
        }
        close();
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        pipeline.abandon();
        for (final RankConnection member : members)
        {
            if (member != null && !member.closed)
            {
                member.close();
                counters.ranksConnected.decrement();
            }
        }
        if (network != null)
        {
            network.close();
        }
        region.close();
        counters.jobsActive.decrement();
    }

    /** What the round's pipeline reports, on the agent's thread. */
    private final class Outcome implements RoundPipeline.Outcome
    {
        @Override
        public void done(final long elements)
        {
            for (final RankConnection member : members)
            {
                region.done(member.identity.localRank(), elements);
                member.ring(AgentProtocol.DOORBELL_DONE);
            }
        }

        @Override
        public void complete(final int status, final String message)
        {
            if (status == AgentProtocol.OK && hosts > 1 && members[0].pending.count() > 0)
            {
                counters.networkRounds.increment();
            }
            completeRound(status, message);
        }

        @Override
        public void failJob(final int status, final String message)
        {
            fail(status, message);
        }
    }
}
