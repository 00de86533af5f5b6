package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.p4.testing.JunkInput;
import org.inagg.p4.testing.JunkInput.Junk;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fuzz harness of the ESA switch and its parameter server (docs/fuzzing.md): both nodes wired to each other
 * through capture transports, junk delivered to one of them (the fuzz test says which), one block of job 1 sent by its
 * three workers in between, retransmitted by those still without a result as the workers would; one-byte records
 * are network events instead of junk: a worker retransmits, or a message already carried is duplicated.
 * <pre>
 *   peers in the switch's transport: server 1, job 1's workers 10 11 12, job 2's workers 20 21
 *   peers in the server's transport: switch 0, the same workers
 * </pre>
 * Job 2 (two workers, a higher header priority) and junk compete for a pool of four aggregators, so preemption,
 * collision fallback, tombstones and flushes all happen. Invariants: nothing thrown; every message either node
 * receives is counted once; the two nodes stop talking (no message loop); every worker of the block gets the exact sum
 * and nobody ever gets a wrong one. Junk that names the block (job 1 with its sequence or its slot copy, AGGREGATE or
 * PARTIAL) is withheld: the server takes fragments and partials from any sender by design (docs/fuzzing.md), so such
 * junk would be a genuine contribution. Head bytes: 0 the switch (ESA with header priorities, ESA shortest-remaining
 * first, ATP), 1 the block's slot copy, 2..5 its sequence, 6 its lanes, 7 its priority.
 */
final class EsaFuzzHarness
{
    static final int JOB = 1;
    static final int WORKERS = 3;
    static final int LANES = 8;
    static final int WINDOW = 4;
    static final int OTHER_JOB = 2;
    static final int SWITCH_IN_SERVER = 0;
    static final int SERVER_IN_SWITCH = 1;
    static final int[] PEERS = {10, 11, 12};
    static final int[] OTHER_PEERS = {20, 21};
    /** Junk senders, in either node's transport: the other node, the workers, a stranger, an unnamed sender. */
    static final int[] JUNK_PEERS = {SWITCH_IN_SERVER, SERVER_IN_SWITCH, 10, 11, 12, 20, 21, 7, -1};
    private static final int MAX_HOPS = 10_000;
    private static final int RETRANSMISSION_ROUNDS = 3;

    private static final EsaCounter[] SWITCH_OUTCOMES = {
        EsaCounter.DROP_MALFORMED, EsaCounter.JOINS, EsaCounter.REJECTS, EsaCounter.DROP_UNKNOWN_WORKER,
        EsaCounter.DROP_UNKNOWN_JOB, EsaCounter.ACKS, EsaCounter.DROP_BAD_SIZE, EsaCounter.FALLBACK_RETRANSMIT,
        EsaCounter.DUPLICATES, EsaCounter.CONTRIBUTIONS, EsaCounter.FALLBACK_TOMBSTONE,
        EsaCounter.FALLBACK_COLLISION, EsaCounter.DROP_BAD_CREDENTIAL, EsaCounter.DROP_UNSUPPORTED,
        EsaCounter.DROP_SOURCE_MISMATCH, EsaCounter.DROP_STALE_SESSION};
    private static final ServerCounter[] SERVER_OUTCOMES = {
        ServerCounter.DROP_MALFORMED, ServerCounter.JOINS, ServerCounter.REJECTS, ServerCounter.LATE,
        ServerCounter.DUPLICATES, ServerCounter.RAW_MERGED, ServerCounter.RESULT_COPIES, ServerCounter.OVERLAPS,
        ServerCounter.PARTIALS_MERGED, ServerCounter.DROP_BAD_CREDENTIAL, ServerCounter.DROP_UNSUPPORTED,
        ServerCounter.DROP_UNKNOWN_JOB, ServerCounter.DROP_UNKNOWN_WORKER, ServerCounter.DROP_SOURCE_MISMATCH,
        ServerCounter.DROP_BAD_SIZE, ServerCounter.DROP_STALE_SESSION};
    /** The other job's JOIN credentials (issue 24), on the switch and the server: JOINs without them are dropped. */
    private static final long[] OTHER_CREDENTIALS = {0x0707_0000_0000_0001L, 0x0707_0000_0000_0002L};

    /** A switch, its server and their transports; built once per variant, jobs installed afresh per run. */
    private record Nodes(EsaSwitch sw, CaptureTransport swOut, ParameterServer server, CaptureTransport serverOut,
        boolean atp)
    {
    }

    private static final Nodes[] VARIANTS;

    static
    {
        JunkInput.init();
        VARIANTS = new Nodes[] {
            nodes(AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER),
            nodes(AllocationMode.PREEMPTIVE, PriorityPolicy.SHORTEST_REMAINING_FIRST),
            nodes(AllocationMode.DEALLOCATE_ON_ACK, PriorityPolicy.HEADER)};
    }

    private static Nodes nodes(final AllocationMode mode, final PriorityPolicy policy)
    {
        final CaptureTransport swOut = new CaptureTransport();
        final CaptureTransport serverOut = new CaptureTransport();
        return new Nodes(
            new EsaSwitch(swOut, new CounterRegistry(64), new EsaSwitchSettings(4, 4, LANES, mode, policy, 16)),
            swOut, new ParameterServer(serverOut, new CounterRegistry(64), 16, 8), serverOut,
            mode == AllocationMode.DEALLOCATE_ON_ACK);
    }

    private final JunkInput input;
    private final boolean junkToServer;
    private final Nodes nodes;
    private final int slotField;
    private final int sequence;
    private final int lanes;
    private final int priority;
    /** A genuine message the harness delivered, kept to be duplicated. */
    private record Carried(boolean toServer, byte[] bytes, int peer)
    {
    }

    private final List<Carried> carried = new ArrayList<>();
    /** Every message a worker got: peer and bytes. */
    private final List<CaptureTransport.Sent> toWorkers = new ArrayList<>();
    /** Junk senders that may have become switches of the job at the server (a PARTIAL of its session). */
    private final Set<Integer> switchesOfTheJob = new HashSet<>();
    private int nextWorker;

    EsaFuzzHarness(final byte[] data, final boolean junkToServer)
    {
        this.input = JunkInput.parse(data);
        this.junkToServer = junkToServer;
        this.nodes = VARIANTS[input.head(0) % VARIANTS.length];
        this.slotField = (input.head(1) & 1) << 15 | (input.head(1) >>> 1) % WINDOW;
        this.sequence = input.headInt(2);
        this.lanes = 1 + input.head(6) % LANES;
        this.priority = input.head(7);
    }

    void run()
    {
        nodes.sw.addJob(new EsaJobConfig(JOB, WORKERS, LANES, WINDOW, 1, PEERS, SERVER_IN_SWITCH, 1 << 16));
        nodes.sw.addJob(new EsaJobConfig(OTHER_JOB, 2, LANES, WINDOW, 9, OTHER_PEERS, SERVER_IN_SWITCH, 1 << 10,
            OTHER_CREDENTIALS));
        nodes.sw.applyControl();
        nodes.server.addJob(new ServerJobConfig(JOB, WORKERS, PEERS, SWITCH_IN_SERVER, nodes.atp));
        nodes.server.addJob(new ServerJobConfig(OTHER_JOB, 2, OTHER_PEERS, SWITCH_IN_SERVER, nodes.atp, WINDOW,
            LANES, OTHER_CREDENTIALS));
        nodes.server.applyControl();
        nodes.swOut.sent.clear();
        nodes.serverOut.sent.clear();

        for (final Junk junk : input.records())
        {
            if (junk.advance())
            {
                nextContribution();
            }
            if (junk.bytes().length == 1)
            {
                networkEvent(junk.bytes()[0] & 0xFF);
            }
            else
            {
                final int peer = JUNK_PEERS[junk.select(JUNK_PEERS.length)];
                if (namesTheBlock(junk, peer))
                {
                    continue;
                }
                if (junkToServer)
                {
                    toServer(junk.bytes(), peer);
                }
                else
                {
                    toSwitch(junk.bytes(), peer);
                }
                pump();
            }
        }
        while (nextWorker < WORKERS)
        {
            nextContribution();
        }
        for (int round = 0; round < RETRANSMISSION_ROUNDS; round++)
        {
            for (int w = 0; w < WORKERS; w++)
            {
                if (!hasResult(w))
                {
                    toSwitch(contribution(w, InaggHeader.FLAG_RETRANSMIT), PEERS[w]);
                    pump();
                }
            }
        }
        for (int w = 0; w < WORKERS; w++)
        {
            assertThat(hasResult(w)).as("worker %d has the block's result", w).isTrue();
        }
    }

    /**
     * A one-byte record is not junk but what a real network and real workers do: {@code b % 4} = 0..2, that worker
     * retransmits the block (once it has sent it); 3, a message already carried is carried again (a duplicate), the
     * {@code (b / 4)}-th modulo their number.
     */
    private void networkEvent(final int b)
    {
        if (b % 4 < WORKERS)
        {
            if (b % 4 < nextWorker)
            {
                toSwitch(contribution(b % 4, InaggHeader.FLAG_RETRANSMIT), PEERS[b % 4]);
                pump();
            }
        }
        else if (!carried.isEmpty())
        {
            final Carried again = carried.get((b >>> 2) % carried.size());
            if (again.toServer())
            {
                toServer(again.bytes(), again.peer());
            }
            else
            {
                toSwitch(again.bytes(), again.peer());
            }
            pump();
        }
    }

    private boolean namesTheBlock(final Junk junk, final int peer)
    {
        if (!junk.wellFormed())
        {
            return false;
        }
        final MemorySegment m = junk.segment();
        final int type = InaggHeader.type(m, 0);
        final boolean ofTheJob = InaggHeader.jobId(m, 0) == JOB
            && (type == MessageType.AGGREGATE || type == EsaWire.TYPE_PARTIAL);
        if (junkToServer && ofTheJob && InaggHeader.session(m, 0) != 0
            && (peer == SWITCH_IN_SERVER || switchesOfTheJob.contains(peer)))
        {
            // A packet of another session of the job from a switch of the job (its configured one, or a peer that sent
            // it a PARTIAL of the job's session: a PARTIAL makes its sender one) is a restart of the job (the server
            // follows the session of the switch in front of it, docs/sessions.md), not junk the block must survive.
            return true;
        }
        if (junkToServer && ofTheJob && type == EsaWire.TYPE_PARTIAL && InaggHeader.session(m, 0) == 0)
        {
            switchesOfTheJob.add(peer); // at most what the server learns: it may still refuse the PARTIAL
        }
        return InaggHeader.jobId(m, 0) == JOB && (type == MessageType.AGGREGATE || type == EsaWire.TYPE_PARTIAL)
            && (InaggHeader.sequence(m, 0) == sequence || InaggHeader.slotField(m, 0) == slotField);
    }

    private void nextContribution()
    {
        if (nextWorker < WORKERS)
        {
            final byte[] contribution = contribution(nextWorker, 0);
            carried.add(new Carried(false, contribution, PEERS[nextWorker]));
            toSwitch(contribution, PEERS[nextWorker]);
            nextWorker++;
            pump();
        }
    }

    private byte[] contribution(final int worker, final int flags)
    {
        final byte[] bytes = new byte[InaggHeader.messageLength(lanes)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        InaggHeader.write(m, 0, MessageType.AGGREGATE, InaggHeader.FLAG_INT32 | flags, JOB, worker,
            slotField & (InaggHeader.SHADOW_BIT - 1), slotField >>> 15, sequence, lanes, 0, InaggHeader.NO_EXPONENT,
            priority);
        for (int k = 0; k < lanes; k++)
        {
            InaggHeader.setElement(m, 0, k, value(worker, k));
        }
        return bytes;
    }

    private int value(final int worker, final int k)
    {
        return sequence * 31 + worker * 1_000_003 + k * 7_919;
    }

    /** Whether worker {@code w} got the block's result; fails on a wrong one. */
    private boolean hasResult(final int w)
    {
        boolean found = false;
        for (final CaptureTransport.Sent sent : toWorkers)
        {
            final MemorySegment m = sent.segment();
            if (sent.peer() != PEERS[w] || InaggHeader.jobId(m, 0) != JOB || InaggHeader.sequence(m, 0) != sequence
                || sent.type() != MessageType.AGGREGATE)
            {
                continue;
            }
            assertThat(InaggHeader.flags(m, 0) & InaggHeader.FLAG_RESULT).isNotZero();
            assertThat(InaggHeader.workerId(m, 0)).isEqualTo(w);
            assertThat(InaggHeader.slotField(m, 0)).isEqualTo(slotField);
            final int[] expected = new int[lanes];
            for (int k = 0; k < lanes; k++)
            {
                for (int v = 0; v < WORKERS; v++)
                {
                    expected[k] += value(v, k);
                }
            }
            assertThat(sent.lanes()).as("worker %d's result", w).containsExactly(expected);
            found = true;
        }
        return found;
    }

    /** Carries messages between the nodes until both are quiet; what goes to workers is kept. */
    private void pump()
    {
        for (int hops = 0; hops < MAX_HOPS; hops++)
        {
            final List<CaptureTransport.Sent> fromSwitch = nodes.swOut.drain();
            final List<CaptureTransport.Sent> fromServer = nodes.serverOut.drain();
            if (fromSwitch.isEmpty() && fromServer.isEmpty())
            {
                return;
            }
            for (final CaptureTransport.Sent sent : fromSwitch)
            {
                if (sent.peer() == SERVER_IN_SWITCH)
                {
                    carried.add(new Carried(true, sent.bytes(), SWITCH_IN_SERVER));
                    toServer(sent.bytes(), SWITCH_IN_SERVER);
                }
                else
                {
                    toWorkers.add(sent);
                }
            }
            for (final CaptureTransport.Sent sent : fromServer)
            {
                if (sent.peer() == SWITCH_IN_SERVER)
                {
                    carried.add(new Carried(false, sent.bytes(), SERVER_IN_SWITCH));
                    toSwitch(sent.bytes(), SERVER_IN_SWITCH);
                }
                else
                {
                    toWorkers.add(sent);
                }
            }
        }
        throw new AssertionError("the switch and the server keep sending each other messages");
    }

    private void toSwitch(final byte[] bytes, final int peer)
    {
        final long received = nodes.sw.counter(EsaCounter.RECEIVED);
        final long outcomes = switchOutcomes();
        nodes.sw.onMessage(MemorySegment.ofArray(bytes), 0, bytes.length, peer);
        assertThat(nodes.sw.counter(EsaCounter.RECEIVED) - received).isEqualTo(1);
        assertThat(switchOutcomes() - outcomes).as("switch outcome counters moved by one message").isEqualTo(1);
        assertThat(nodes.sw.counter(EsaCounter.TX_FULL)).isZero();
    }

    private void toServer(final byte[] bytes, final int peer)
    {
        final long received = nodes.server.counter(ServerCounter.RECEIVED);
        final long outcomes = serverOutcomes();
        nodes.server.onMessage(MemorySegment.ofArray(bytes), 0, bytes.length, peer);
        assertThat(nodes.server.counter(ServerCounter.RECEIVED) - received).isEqualTo(1);
        assertThat(serverOutcomes() - outcomes).as("server outcome counters moved by one message").isEqualTo(1);
    }

    private long switchOutcomes()
    {
        long sum = 0;
        for (final EsaCounter counter : SWITCH_OUTCOMES)
        {
            sum += nodes.sw.counter(counter);
        }
        return sum;
    }

    private long serverOutcomes()
    {
        long sum = 0;
        for (final ServerCounter counter : SERVER_OUTCOMES)
        {
            sum += nodes.server.counter(counter);
        }
        return sum;
    }
}
