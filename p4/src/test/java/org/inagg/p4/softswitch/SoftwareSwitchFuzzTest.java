package org.inagg.p4.softswitch;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.EsaWire;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.p4.testing.JunkInput;
import org.inagg.p4.testing.JunkInput.Junk;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes the software switch's ingress (docs/fuzzing.md): arbitrary messages from arbitrary peers, interleaved with a
 * job's joins and one exact round, for two jobs: job A learns its workers' peers from their JOINs and multicasts its
 * sums; job B has registered sources and JOIN credentials, and sends its local workers' sum up to a parameter server
 * (two-level), whose results it relays down (a RESULT of B's session from the server is withheld: it is genuine).
 * <p>
 * Invariants: nothing thrown; every message is counted once ({@code received} goes up by one and so does exactly one
 * outcome counter); junk that is not a legitimate contribution to the round under test changes nothing in it: the
 * round completes exactly when its last worker contributes, with the exact sum, sent to exactly its workers (A) or its
 * server (B). Junk that the protocol must accept (a well-formed contribution to the round under test from the worker's
 * own source, to either shadow copy of its slot, in the jobs' session; a JOIN that would move one of A's workers; a JOIN
 * from a local worker's own source, which with another incarnation restarts the job) is withheld: the switch cannot
 * tell it from the real thing.
 * Input: {@link JunkInput}; head bytes 0, 1 the slot copies of A's and B's rounds, 2..5 their sequence, 6 their lane
 * counts, 7 the next exponents. A one-byte record is a worker retransmitting its contribution to the round under test
 * (see {@link Run#retransmit}).
 */
class SoftwareSwitchFuzzTest
{
    static final int JOB_A = 1;
    static final int WORKERS_A = 3;
    static final int SLOTS_A = 4;
    static final int LANES_A = 8;
    static final int JOB_B = 2;
    static final int WORKERS_B = 3;
    static final int SLOTS_B = 2;
    static final int LANES_B = 4;
    static final int[] PEERS_A = {100, 101, 102};
    static final int[] PEERS_B = {200, 201, 202};
    static final int[] LOCAL_B = {0, 1};
    /** Job B's JOIN credentials (issue 24): a JOIN of B without its worker's is junk, however it got the source. */
    static final long[] CREDENTIALS_B = {0x0B0B_0000_0000_0001L, 0x0B0B_0000_0000_0002L, 0x0B0B_0000_0000_0003L};
    static final int SERVER = 300;
    /** Where junk comes from: the workers, the server, a stranger and a sender the transport could not name. */
    static final int[] JUNK_PEERS = {100, 101, 102, 200, 201, 202, SERVER, 7, -1};

    private static final SwitchCounter[] OUTCOMES = {
        SwitchCounter.CONTRIBUTIONS, SwitchCounter.DUPLICATES, SwitchCounter.DROP_MALFORMED,
        SwitchCounter.DROP_UNKNOWN_JOB, SwitchCounter.DROP_UNKNOWN_WORKER, SwitchCounter.DROP_SOURCE_MISMATCH,
        SwitchCounter.DROP_BAD_SLOT, SwitchCounter.DROP_BAD_SIZE, SwitchCounter.DROP_STALE,
        SwitchCounter.DROP_VIOLATION, SwitchCounter.JOINS, SwitchCounter.REJECTS, SwitchCounter.RETRANSMIT_REPLIES,
        SwitchCounter.UPSTREAM_FORWARDS, SwitchCounter.DROP_STALE_SESSION, SwitchCounter.DROP_BAD_CREDENTIAL,
        SwitchCounter.DROP_UNSUPPORTED, SwitchCounter.RESULTS_RELAYED};

    /** One switch for every run: installing a job again resets it (its slots and learned peers). */
    private static final CaptureTransport TRANSPORT = new CaptureTransport();
    private static final SoftwareSwitch SWITCH;

    static
    {
        JunkInput.init();
        SWITCH = new SoftwareSwitch(TRANSPORT, new CounterRegistry(64), 16);
    }

    @FuzzTest(maxDuration = "10s")
    void shouldCountJunkAndStillAggregateTheRoundExactly(final byte[] data)
    {
        new Run(JunkInput.parse(data)).run();
    }

    /** One run: the jobs installed afresh, the junk and the legitimate steps in the input's order, then the checks. */
    static final class Run
    {
        private final JunkInput input;
        private final int slotFieldA;
        private final int slotFieldB;
        private final int sequence;
        private final int lanesA;
        private final int lanesB;
        private final List<Runnable> steps = new ArrayList<>();
        private int nextStep;
        private int markA = -1;
        private int markB = -1;
        private final boolean[] sentA = new boolean[WORKERS_A];
        private final boolean[] sentB = new boolean[WORKERS_B];
        private boolean completeA;
        private boolean completeB;
        /** Retransmissions of a complete round: each is answered (A) or forwarded to the server (B). */
        private int repliesA;
        private int forwardsB;

        Run(final JunkInput input)
        {
            this.input = input;
            slotFieldA = (input.head(0) & 1) << 15 | (input.head(0) >>> 1) % SLOTS_A;
            slotFieldB = (input.head(1) & 1) << 15 | (input.head(1) >>> 1) % SLOTS_B;
            sequence = input.headInt(2);
            lanesA = 1 + (input.head(6) & 7);
            lanesB = 1 + (input.head(6) >>> 3 & 3);
            for (int w = 0; w < WORKERS_A; w++)
            {
                final int worker = w;
                steps.add(() -> join(worker));
            }
            for (int w = 0; w < WORKERS_A; w++)
            {
                final int worker = w;
                steps.add(() ->
                {
                    if (worker == WORKERS_A - 1)
                    {
                        markA = TRANSPORT.sent.size();
                    }
                    deliver(contribution(JOB_A, worker, slotFieldA, lanesA, 0), PEERS_A[worker]);
                    sentA[worker] = true;
                    completeA = worker == WORKERS_A - 1;
                });
            }
            for (final int w : LOCAL_B)
            {
                steps.add(() ->
                {
                    if (w == LOCAL_B[LOCAL_B.length - 1])
                    {
                        markB = TRANSPORT.sent.size();
                    }
                    deliver(contribution(JOB_B, w, slotFieldB, lanesB, 0), PEERS_B[w]);
                    sentB[w] = true;
                    completeB = w == LOCAL_B[LOCAL_B.length - 1];
                });
            }
        }

        void run()
        {
            SWITCH.addJob(new SwitchJobConfig(JOB_A, WORKERS_A, SLOTS_A, LANES_A));
            SWITCH.addJob(new SwitchJobConfig(JOB_B, WORKERS_B, SLOTS_B, LANES_B, SwitchJobConfig.NO_SLOT_BASE,
                SwitchJobConfig.NO_MULTICAST_GROUP, PEERS_B, 0, CREDENTIALS_B),
                new UpstreamAggregation(SERVER, LOCAL_B, true));
            SWITCH.doWork();
            TRANSPORT.sent.clear();
            for (final Junk junk : input.records())
            {
                if (junk.advance() && nextStep < steps.size())
                {
                    steps.get(nextStep++).run();
                }
                if (junk.bytes().length == 1)
                {
                    retransmit(junk.bytes()[0] & 0xFF);
                    continue;
                }
                final int peer = JUNK_PEERS[junk.select(JUNK_PEERS.length)];
                if (!mustAccept(junk, peer))
                {
                    deliver(junk.bytes(), peer);
                }
            }
            while (nextStep < steps.size())
            {
                steps.get(nextStep++).run();
            }
            checkRoundA();
            checkRoundB();
            assertThat(SWITCH.counter(SwitchCounter.TX_FULL)).isZero();
        }

        /**
         * A one-byte record is not junk but a worker retransmitting its contribution to the round under test (once it
         * has sent it), as a worker that lost the result does: {@code b % 5} = 0..2 A's workers, 3..4 B's.
         */
        private void retransmit(final int b)
        {
            final int w = b % 5;
            if (w < WORKERS_A && sentA[w])
            {
                deliver(contribution(JOB_A, w, slotFieldA, lanesA, InaggHeader.FLAG_RETRANSMIT), PEERS_A[w]);
                repliesA += completeA ? 1 : 0;
            }
            else if (w >= WORKERS_A && sentB[LOCAL_B[w - WORKERS_A]])
            {
                final int worker = LOCAL_B[w - WORKERS_A];
                deliver(contribution(JOB_B, worker, slotFieldB, lanesB, InaggHeader.FLAG_RETRANSMIT), PEERS_B[worker]);
                forwardsB += completeB ? 1 : 0;
            }
        }

        /** What the switch must take as genuine: withheld, as it would change the round under test legitimately. */
        private boolean mustAccept(final Junk junk, final int peer)
        {
            if (!junk.wellFormed())
            {
                return false;
            }
            final MemorySegment m = junk.segment();
            final int job = InaggHeader.jobId(m, 0);
            final int worker = InaggHeader.workerId(m, 0);
            final int type = InaggHeader.type(m, 0);
            if (type == MessageType.JOIN)
            {
                // A's: any (open mode: it moves the worker, or restarts the job with another incarnation); B's: from
                // a local worker's registered source showing its JOIN credential (another incarnation restarts the
                // job: docs/sessions.md); without the credential it is junk like any other.
                return job == JOB_A && worker < WORKERS_A && InaggHeader.sequence(m, 0) == WORKERS_A
                    || job == JOB_B && (worker == LOCAL_B[0] || worker == LOCAL_B[1]) && peer == PEERS_B[worker]
                    && InaggHeader.sequence(m, 0) == WORKERS_B
                    && InaggHeader.joinCredential(m, 0) == CREDENTIALS_B[worker];
            }
            if (type == MessageType.AGGREGATE && (InaggHeader.flags(m, 0) & InaggHeader.FLAG_RESULT) != 0)
            {
                // B's results come down through the switch: a RESULT of B's session from its server is relayed.
                return job == JOB_B && peer == SERVER && InaggHeader.session(m, 0) == 0;
            }
            // a contribution of the jobs' session (0); one of another session is junk: dropped as stale
            final boolean contribution = type == MessageType.AGGREGATE
                && (InaggHeader.flags(m, 0) & InaggHeader.FLAG_RESULT) == 0 && InaggHeader.session(m, 0) == 0;
            if (!contribution)
            {
                return false;
            }
            if (job == JOB_A)
            {
                return worker < WORKERS_A && peer == PEERS_A[worker] && sameSlot(m, slotFieldA)
                    && InaggHeader.elementCount(m, 0) <= LANES_A;
            }
            return job == JOB_B && (worker == LOCAL_B[0] || worker == LOCAL_B[1]) && peer == PEERS_B[worker]
                && sameSlot(m, slotFieldB) && InaggHeader.elementCount(m, 0) <= LANES_B;
        }

        /**
         * Either shadow copy of the round's slot: a worker's fresh contribution to the other copy says it has this
         * round's result (it clears its seen bit here), which a worker never says before it has.
         */
        private static boolean sameSlot(final MemorySegment m, final int slotField)
        {
            return InaggHeader.slotIndex(m, 0) == (slotField & (InaggHeader.SHADOW_BIT - 1));
        }

        private void join(final int worker)
        {
            final byte[] join = new byte[InaggHeader.LENGTH];
            InaggHeader.write(MemorySegment.ofArray(join), 0, MessageType.JOIN, 0, JOB_A, worker, 0, 0, WORKERS_A, 0,
                0, InaggHeader.NO_EXPONENT, 0);
            deliver(join, PEERS_A[worker]);
            final CaptureTransport.Sent ack = TRANSPORT.sent.getLast();
            assertThat(ack.peer()).isEqualTo(PEERS_A[worker]);
            assertThat(ack.type()).isEqualTo(MessageType.JOIN_ACK);
            assertThat(InaggHeader.workerId(ack.segment(), 0)).isEqualTo(worker);
        }

        private byte[] contribution(final int job, final int worker, final int slotField, final int lanes,
            final int flags)
        {
            final byte[] bytes = new byte[InaggHeader.messageLength(lanes)];
            final MemorySegment m = MemorySegment.ofArray(bytes);
            InaggHeader.write(m, 0, MessageType.AGGREGATE, InaggHeader.FLAG_INT32 | flags, job, worker,
                slotField & (InaggHeader.SHADOW_BIT - 1), slotField >>> 15, sequence, lanes, 0,
                nextExponent(worker), 0);
            for (int k = 0; k < lanes; k++)
            {
                InaggHeader.setElement(m, 0, k, value(job, worker, k));
            }
            return bytes;
        }

        private int value(final int job, final int worker, final int k)
        {
            return sequence * 31 + job * 977 + worker * 1_000_003 + k * 7_919;
        }

        private int nextExponent(final int worker)
        {
            return (byte)(input.head(7) + worker);
        }

        private int sum(final int job, final int[] workers, final int k)
        {
            int sum = 0;
            for (final int w : workers)
            {
                sum += value(job, w, k);
            }
            return sum;
        }

        private void checkRoundA()
        {
            final int[] all = {0, 1, 2};
            int results = 0;
            int maxExponent = Integer.MIN_VALUE;
            for (final int w : all)
            {
                maxExponent = Math.max(maxExponent, nextExponent(w));
            }
            for (int i = 0; i < TRANSPORT.sent.size(); i++)
            {
                final CaptureTransport.Sent sent = TRANSPORT.sent.get(i);
                final MemorySegment m = sent.segment();
                if (sent.type() != MessageType.AGGREGATE || InaggHeader.jobId(m, 0) != JOB_A
                    || InaggHeader.slotField(m, 0) != slotFieldA || InaggHeader.sequence(m, 0) != sequence)
                {
                    continue;
                }
                assertThat(i).as("A's round completed before its last contribution").isGreaterThanOrEqualTo(markA);
                assertThat(InaggHeader.flags(m, 0) & InaggHeader.FLAG_RESULT).isNotZero();
                final int worker = InaggHeader.workerId(m, 0);
                assertThat(worker).isLessThan(WORKERS_A);
                assertThat(sent.peer()).isEqualTo(PEERS_A[worker]);
                assertThat(InaggHeader.nextExponent(m, 0)).isEqualTo(maxExponent);
                final int[] expected = new int[lanesA];
                for (int k = 0; k < lanesA; k++)
                {
                    expected[k] = sum(JOB_A, all, k);
                }
                assertThat(sent.lanes()).as("A's sum").containsExactly(expected);
                results++;
            }
            assertThat(results).as("one result per worker of A and one per retransmission after")
                .isEqualTo(WORKERS_A + repliesA);
        }

        private void checkRoundB()
        {
            int partials = 0;
            int forwards = 0;
            for (int i = 0; i < TRANSPORT.sent.size(); i++)
            {
                final CaptureTransport.Sent sent = TRANSPORT.sent.get(i);
                final MemorySegment m = sent.segment();
                if ((sent.type() != EsaWire.TYPE_PARTIAL && sent.type() != MessageType.AGGREGATE)
                    || InaggHeader.jobId(m, 0) != JOB_B || InaggHeader.slotField(m, 0) != slotFieldB
                    || InaggHeader.sequence(m, 0) != sequence || sent.peer() != SERVER)
                {
                    continue;
                }
                assertThat(i).as("B's round completed before its last contribution").isGreaterThanOrEqualTo(markB);
                if (sent.type() == MessageType.AGGREGATE)
                {
                    // A retransmission of the complete round, forwarded as it came with the reason.
                    final int worker = InaggHeader.workerId(m, 0);
                    assertThat(worker).isIn(LOCAL_B[0], LOCAL_B[1]);
                    assertThat(sent.status()).isEqualTo(EsaWire.REASON_RETRANSMIT);
                    final byte[] expected = contribution(JOB_B, worker, slotFieldB, lanesB,
                        InaggHeader.FLAG_RETRANSMIT);
                    InaggHeader.setStatus(MemorySegment.ofArray(expected), 0, EsaWire.REASON_RETRANSMIT);
                    assertThat(sent.bytes()).isEqualTo(expected);
                    forwards++;
                    continue;
                }
                assertThat(sent.type()).isEqualTo(EsaWire.TYPE_PARTIAL);
                assertThat(sent.status()).isEqualTo(EsaWire.REASON_SUBTREE);
                assertThat(EsaWire.partialBitmapWords(m, 0)).isEqualTo(1);
                assertThat(EsaWire.partialBitmapWord(m, 0, 0)).isEqualTo(0b011);
                final int[] expected = new int[lanesB];
                for (int k = 0; k < lanesB; k++)
                {
                    expected[k] = sum(JOB_B, LOCAL_B, k);
                }
                assertThat(CaptureTransport.partialLanes(sent)).as("B's local sum").containsExactly(expected);
                partials++;
            }
            assertThat(partials).as("one partial of B to its server").isEqualTo(1);
            assertThat(forwards).as("B's retransmissions after completion forwarded").isEqualTo(forwardsB);
        }

        /** Delivers a message and checks that it was counted exactly once. */
        private static void deliver(final byte[] bytes, final int peer)
        {
            final long received = SWITCH.counter(SwitchCounter.RECEIVED);
            final long outcomes = outcomes();
            SWITCH.onMessage(MemorySegment.ofArray(bytes), 0, bytes.length, peer);
            assertThat(SWITCH.counter(SwitchCounter.RECEIVED) - received).isEqualTo(1);
            assertThat(outcomes() - outcomes).as("outcome counters moved by one message").isEqualTo(1);
        }

        private static long outcomes()
        {
            long sum = 0;
            for (final SwitchCounter counter : OUTCOMES)
            {
                sum += SWITCH.counter(counter);
            }
            return sum;
        }
    }
}
