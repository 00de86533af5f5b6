package org.inagg.services.agent;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * One job's ranks on this host: their shared-memory file, their requests, the rounds. Runs on the agent's thread only
 * (the switch stage posts its completions back to it).
 * <p>
 * Round errors (sizes, ops or types that differ between the ranks, NaN or infinity) fail that round on every rank
 * and leave the job usable. Job errors (a rank that leaves while others are in a round, a malformed request, the
 * switch stage) fail the job: every rank gets the error, its connection is closed and the file is removed. So does
 * a round that waits longer than the job's collective timeout for a local rank to ring after the first one did
 * ({@link #expire}): a rank that hangs, alive, frees the job within that bound, and the others learn which rank it is.
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
    private final MemorySegment[] inputs;
    private final InHostReducer reducer;
    private final NetworkStage network;
    private final HostAgentCounters counters;
    private final Consumer<Runnable> post;
    private final long defaultTimeoutNs;
    private long collectiveTimeoutNs = Long.MAX_VALUE;
    private RankConnection firstToRing;
    private long firstRangNs;
    private int joined;
    private int requested;
    private boolean inNetwork;
    private boolean closed;
    private long rounds;

    JobSession(final Hello first, final Path file, final long slotBytes, final InHostReducer reducer,
        final NetworkStage network, final HostAgentCounters counters, final Consumer<Runnable> post,
        final Duration defaultCollectiveTimeout)
    {
        this.defaultTimeoutNs = defaultCollectiveTimeout.toNanos();
        this.key = first.jobKey();
        this.worldSize = first.worldSize();
        this.localWorldSize = first.localWorldSize();
        this.hosts = first.hosts();
        this.reducer = reducer;
        this.network = network;
        this.counters = counters;
        this.post = post;
        this.region = SharedRegion.create(file, localWorldSize, worldSize, slotBytes, key);
        this.members = new RankConnection[localWorldSize];
        this.inputs = new MemorySegment[localWorldSize];
        for (int i = 0; i < localWorldSize; i++)
        {
            inputs[i] = region.data(i);
        }
        counters.jobsStarted.increment();
        counters.jobsActive.increment();
        LOG.log(Level.INFO, "job {0}: started, {1} local ranks of {2} on {3} host(s), shared memory {4} ({5} bytes a "
            + "slot)", key, localWorldSize, worldSize, hosts, file, slotBytes);
    }

    SharedRegion region()
    {
        return region;
    }

    boolean isClosed()
    {
        return closed;
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

    /** When {@link #expire} fails the round in progress unless every local rank rang; MAX_VALUE when none waits. */
    long deadlineNs()
    {
        return closed || requested == 0 || inNetwork ? Long.MAX_VALUE : firstRangNs + collectiveTimeoutNs;
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
        int count = 0;
        for (int i = 0; i < localWorldSize; i++)
        {
            final RankConnection member = members[i];
            if (member == null || member.pending == null)
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
            + key + ": " + missing + " did not submit it within the collective timeout "
            + "of " + seconds(collectiveTimeoutNs) + " s after "
            + firstToRing.describe() + " did (hung, or busy elsewhere); the job is freed (INAGG_COLLECTIVE_TIMEOUT, "
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
                    + ": rank " + members[0].identity.rank() + " asks " + describe(first) + ", rank "
                    + members[i].identity.rank() + " asks " + describe(other));
                return;
            }
        }
        final String parts = partsProblem(first);
        if (parts != null)
        {
            completeRound(AgentProtocol.ERROR_BAD_REQUEST, parts);
            return;
        }
        if (first.op() == AgentProtocol.OP_GATHER)
        {
            gather(first);
        }
        else if (first.op() == AgentProtocol.OP_MIN || first.op() == AgentProtocol.OP_MAX)
        {
            if (!InHostExtremes.reduce(inputs, region.result(), first.count(), first.dtype(),
                first.op() == AgentProtocol.OP_MAX))
            {
                completeRound(AgentProtocol.ERROR_NON_FINITE, nanMessage(first));
                return;
            }
        }
        else
        {
            final int divisor = first.op() == AgentProtocol.OP_AVG && hosts == 1 ? worldSize : 1;
            final boolean finite = reducer.reduce(inputs, region.result(), first.count(), first.dtype(), divisor);
            if (!finite)
            {
                completeRound(AgentProtocol.ERROR_NON_FINITE, nonFinite(first));
                return;
            }
        }
        if (hosts == 1 || first.count() == 0)
        {
            completeRound(AgentProtocol.OK, null);
            return;
        }
        inNetwork = true;
        network.stage(region.result(), first, ranksPerHost()).whenComplete((ignored, error) ->
            post.accept(() -> onNetworkDone(first, error)));
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

    /**
     * A gather round: each local rank's range of its data region into the result at the same offsets. Over several
     * hosts, without parts, the rest of the result is zero and the switch's exact int32 sum fills in the other hosts'
     * ranges (they give disjoint ones, zeros elsewhere); with parts the switch's ALL_GATHER fills them in.
     */
    private void gather(final CollectiveRequest first)
    {
        final MemorySegment result = region.result();
        if (hosts > 1 && first.partElements() == 0)
        {
            result.asSlice(0, first.count() * AgentProtocol.elementBytes(first.dtype())).fill((byte)0);
        }
        for (int i = 0; i < localWorldSize; i++)
        {
            final CollectiveRequest request = members[i].pending;
            if (request.gatherLength() > 0)
            {
                MemorySegment.copy(inputs[i], request.gatherFrom(), result, request.gatherFrom(),
                    request.gatherLength());
            }
        }
    }

    private void onNetworkDone(final CollectiveRequest first, final Throwable error)
    {
        inNetwork = false;
        if (closed)
        {
            return;
        }
        if (error != null)
        {
            final Throwable cause = error.getCause() != null ? error.getCause() : error;
            fail(AgentProtocol.ERROR_NETWORK, "all-reduce #" + first.sequence() + " through the switch failed: "
                + cause.getMessage());
            return;
        }
        counters.networkRounds.increment();
        if (first.op() == AgentProtocol.OP_AVG)
        {
            InHostReducer.divide(region.result(), first.count(), first.dtype(), worldSize);
        }
        completeRound(AgentProtocol.OK, null);
    }

    private String nonFinite(final CollectiveRequest round)
    {
        // Cold path: find the first rank whose own input is not finite, to name it.
        for (int i = 0; i < localWorldSize; i++)
        {
            final MemorySegment scratch = region.result();
            if (!InHostReducer.range(new MemorySegment[] {inputs[i]}, scratch, 0, round.count(), round.dtype(), 1))
            {
                return "NaN or infinity in the float tensor of rank " + members[i].identity.rank()
                    + " in all-reduce #" + round.sequence() + " (" + round.count() + " elements); nothing was summed";
            }
        }
        return "the sum overflowed to infinity in all-reduce #" + round.sequence() + " (" + round.count()
            + " elements): the inputs are finite but too large for float32";
    }

    private String nanMessage(final CollectiveRequest round)
    {
        // Cold path: name the first rank with a NaN.
        for (int i = 0; i < localWorldSize; i++)
        {
            for (long e = 0; e < round.count(); e++)
            {
                if (Float.isNaN(inputs[i].getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, e)))
                {
                    return "NaN in the float tensor of rank " + members[i].identity.rank() + " at element " + e
                        + " of " + describe(round) + " #" + round.sequence() + "; nothing was reduced";
                }
            }
        }
        return "NaN in " + describe(round) + " #" + round.sequence();
    }

    private static String describe(final CollectiveRequest request)
    {
        if (request.op() == AgentProtocol.OP_MIN || request.op() == AgentProtocol.OP_MAX)
        {
            return (request.op() == AgentProtocol.OP_MIN ? "MIN" : "MAX") + " of "
                + (request.dtype() == AgentProtocol.DTYPE_FLOAT32 ? "float32" : "int32");
        }
        if (request.op() == AgentProtocol.OP_GATHER)
        {
            return "GATHER (all-gather or broadcast)";
        }
        return (request.op() == AgentProtocol.OP_SUM ? "SUM" : "AVG") + " of "
            + (request.dtype() == AgentProtocol.DTYPE_FLOAT32 ? "float32" : "int32");
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
        if (requested > 0 || inNetwork)
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

    /** The agent's counters, resolved once. */
    static final class HostAgentCounters
    {
        final AtomicCounter jobsStarted;
        final AtomicCounter jobsFailed;
        final AtomicCounter ranksConnected;
        final AtomicCounter rounds;
        final AtomicCounter bytesReduced;
        final AtomicCounter roundErrors;
        final AtomicCounter hellosRefused;
        final AtomicCounter networkRounds;
        final AtomicCounter jobsActive;
        final AtomicCounter peersRefused;

        HostAgentCounters(final org.inagg.agent.CounterRegistry registry, final String name)
        {
            jobsStarted = registry.newCounter(HostAgentCounter.JOBS_STARTED, label(name, HostAgentCounter.JOBS_STARTED));
            jobsFailed = registry.newCounter(HostAgentCounter.JOBS_FAILED, label(name, HostAgentCounter.JOBS_FAILED));
            ranksConnected = registry.newCounter(HostAgentCounter.RANKS_CONNECTED,
                label(name, HostAgentCounter.RANKS_CONNECTED));
            rounds = registry.newCounter(HostAgentCounter.ROUNDS, label(name, HostAgentCounter.ROUNDS));
            bytesReduced = registry.newCounter(HostAgentCounter.BYTES_REDUCED,
                label(name, HostAgentCounter.BYTES_REDUCED));
            roundErrors = registry.newCounter(HostAgentCounter.ROUND_ERRORS, label(name, HostAgentCounter.ROUND_ERRORS));
            hellosRefused = registry.newCounter(HostAgentCounter.HELLOS_REFUSED,
                label(name, HostAgentCounter.HELLOS_REFUSED));
            networkRounds = registry.newCounter(HostAgentCounter.NETWORK_ROUNDS,
                label(name, HostAgentCounter.NETWORK_ROUNDS));
            jobsActive = registry.newCounter(HostAgentCounter.JOBS_ACTIVE, label(name, HostAgentCounter.JOBS_ACTIVE));
            peersRefused = registry.newCounter(HostAgentCounter.PEERS_REFUSED,
                label(name, HostAgentCounter.PEERS_REFUSED));
        }

        private static String label(final String name, final HostAgentCounter counter)
        {
            return "agent " + name + ": " + counter.label();
        }
    }
}
