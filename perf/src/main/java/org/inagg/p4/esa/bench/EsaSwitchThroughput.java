package org.inagg.p4.esa.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.esa.EsaJobConfig;
import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.EsaSwitchSettings;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.p4.softswitch.UpstreamAggregation;
import org.inagg.transport.DiscardTransport;
import org.inagg.transport.MessageHandler;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

/**
 * Packets per second of one switch pipeline on one core: pre-built AGGREGATEs handed to {@code onMessage} in a loop
 * (no transport in the way; sends are claimed into scratch memory and discarded), sequences advanced between passes
 * so every pass aggregates fresh blocks. Scenarios:
 * <ul>
 *   <li>{@code softswitch}: the existing per-job {@link SoftwareSwitch} (reference);</li>
 *   <li>{@code esa-no-preemption}: 4 jobs of 4 workers, equal priorities, 64 aggregators, each block's packets
 *       back to back (allocate, then three adds, the last completing: a multicast of 4 and a copy to the server);</li>
 *   <li>{@code esa-preemption}: a low-priority job leaves 3 of 4 contributions in an aggregator, a high-priority job
 *       preempts it (partial to the server), completes, and the low job's straggler goes to the server: one
 *       preemption per 8 packets;</li>
 *   <li>{@code softswitch-upstream}: the software switch in two-level mode: each completed slot sends one PARTIAL up
 *       to a parameter server instead of multicasting four results.</li>
 * </ul>
 * The JMH benchmark {@code org.inagg.perf.jmh.EsaSwitchBenchmark} runs the same {@link Scenario}s.
 * <pre>java ... org.inagg.p4.esa.bench.EsaSwitchThroughput [lanes] [seconds per scenario] [rounds]</pre>
 */
public final class EsaSwitchThroughput
{
    private static final int WORKERS = 4;
    private static final int JOBS = 4;
    private static final int BLOCKS_PER_JOB = 512;
    private static final int AGGREGATORS = 64;
    private static final int JOB_MULTIPLIER = 0x9E3779B1;
    /** The scenarios, by name. */
    public static final String[] SCENARIOS = {"softswitch", "esa-no-preemption", "esa-preemption",
        "softswitch-upstream"};
    /** Packets one {@link Scenario#pass()} feeds, in every scenario. */
    public static final int PACKETS_PER_PASS = JOBS * BLOCKS_PER_JOB * WORKERS;

    private EsaSwitchThroughput()
    {
    }

    /** A switch and its packet stream: each {@link #pass()} feeds {@link #PACKETS_PER_PASS} fresh packets. */
    public static final class Scenario
    {
        private final MessageHandler handler;
        private final Stream stream;

        private Scenario(final MessageHandler handler, final Stream stream)
        {
            this.handler = handler;
            this.stream = stream;
        }

        /** Advances the sequences (fresh blocks) and hands every packet to the switch; returns the packets fed. */
        public int pass()
        {
            stream.advance();
            for (int p = 0; p < stream.count(); p++)
            {
                handler.onMessage(stream.memory(), (long)p * stream.messageLength(), stream.messageLength(),
                    stream.peers()[p]);
            }
            return stream.count();
        }

        public MessageHandler handler()
        {
            return handler;
        }
    }

    /** Builds scenario {@code name} (one of {@link #SCENARIOS}) with {@code lanes} lanes per packet. */
    public static Scenario scenario(final String name, final int lanes)
    {
        final int window = BLOCKS_PER_JOB / 2;
        return switch (name)
        {
            case "softswitch" -> slotSwitch(lanes, window, false);
            case "softswitch-upstream" -> slotSwitch(lanes, window, true);
            case "esa-no-preemption" ->
                new Scenario(esa(AllocationMode.PREEMPTIVE, AGGREGATORS, lanes), interleaved(lanes, window));
            case "esa-preemption" -> new Scenario(esa(AllocationMode.PREEMPTIVE, AGGREGATORS, lanes), preempting(lanes));
            default -> throw new IllegalArgumentException("unknown scenario '" + name + "'; one of "
                + String.join(", ", SCENARIOS));
        };
    }

    private static Scenario slotSwitch(final int lanes, final int window, final boolean upstream)
    {
        final SoftwareSwitch sw = new SoftwareSwitch(new DiscardTransport(1 << 16), new CounterRegistry(64), 64);
        for (int j = 1; j <= JOBS; j++)
        {
            final int[] peers = new int[WORKERS];
            final int[] workers = new int[WORKERS];
            for (int w = 0; w < WORKERS; w++)
            {
                peers[w] = 100 * j + w;
                workers[w] = w;
            }
            final SwitchJobConfig config = new SwitchJobConfig(j, WORKERS, window, lanes, (j - 1) * window, 0, peers);
            sw.addJob(config, upstream ? new UpstreamAggregation(50 + j, workers) : null);
        }
        sw.doWork();
        final Stream stream = interleaved(lanes, window);
        // Sequences advance by a multiple of 2 * window so a block keeps its slot and alternates copies properly.
        return new Scenario(sw, new Stream(stream.memory(), stream.messageLength(), stream.count(), stream.peers(),
            BLOCKS_PER_JOB));
    }

    /** A stream of pre-built packets, with each one's sender. */
    private record Stream(MemorySegment memory, int messageLength, int count, int[] peers, int sequenceStride)
    {
        void advance()
        {
            for (int p = 0; p < count; p++)
            {
                final long o = (long)p * messageLength;
                InaggHeader.setSequence(memory, o, InaggHeader.sequence(memory, o) + sequenceStride);
            }
        }
    }

    private static Stream interleaved(final int lanes, final int window)
    {
        final int count = JOBS * BLOCKS_PER_JOB * WORKERS;
        final int length = InaggHeader.messageLength(lanes);
        final MemorySegment memory = Arena.ofAuto().allocate((long)count * length);
        final int[] peers = new int[count];
        int p = 0;
        for (int v = 0; v < BLOCKS_PER_JOB; v++)
        {
            for (int j = 0; j < JOBS; j++)
            {
                for (int w = 0; w < WORKERS; w++)
                {
                    write(memory, (long)p * length, j + 1, w, v, window, lanes, 1);
                    peers[p++] = 100 * (j + 1) + w;
                }
            }
        }
        return new Stream(memory, length, count, peers, BLOCKS_PER_JOB);
    }

    /** Low job 1 puts 3 of 4 in; high job 2 preempts and completes; job 1's fourth goes to the server. */
    private static Stream preempting(final int lanes)
    {
        final int blocks = 2 * BLOCKS_PER_JOB;
        final int count = blocks * 2 * WORKERS;
        final int length = InaggHeader.messageLength(lanes);
        final MemorySegment memory = Arena.ofAuto().allocate((long)count * length);
        final int[] peers = new int[count];
        int p = 0;
        for (int v = 0; v < blocks; v++)
        {
            for (int w = 0; w < WORKERS - 1; w++)
            {
                write(memory, (long)p * length, 1, w, v, blocks, lanes, 1);
                peers[p++] = 100 + w;
            }
            for (int w = 0; w < WORKERS; w++)
            {
                // Job 2's sequence chosen so that its block hashes to job 1's block's aggregator (pool of 64).
                write(memory, (long)p * length, 2, w, v - JOB_MULTIPLIER, blocks, lanes, 9);
                peers[p++] = 200 + w;
            }
            write(memory, (long)p * length, 1, WORKERS - 1, v, blocks, lanes, 1);
            peers[p++] = 100 + WORKERS - 1;
        }
        return new Stream(memory, length, count, peers, blocks);
    }

    private static void write(final MemorySegment m, final long o, final int job, final int worker, final int v,
        final int window, final int lanes, final int priority)
    {
        InaggHeader.write(m, o, MessageType.AGGREGATE, InaggHeader.FLAG_INT32, job, worker, v % window,
            (v / window) & 1, v, lanes, 0, InaggHeader.NO_EXPONENT, priority);
        for (int k = 0; k < lanes; k++)
        {
            InaggHeader.setElement(m, o, k, v + k + worker);
        }
    }

    private static double run(final Scenario scenario, final double seconds)
    {
        final long deadline = System.nanoTime() + (long)(seconds * 1e9);
        long packets = 0;
        long busyNs = 0;
        while (System.nanoTime() < deadline)
        {
            final long start = System.nanoTime();
            packets += scenario.pass();
            busyNs += System.nanoTime() - start;
        }
        return packets / (busyNs / 1e9);
    }

    private static EsaSwitch esa(final AllocationMode mode, final int aggregators, final int lanes)
    {
        final EsaSwitch sw = new EsaSwitch(new DiscardTransport(1 << 16), new CounterRegistry(64),
            new EsaSwitchSettings(aggregators, WORKERS, lanes, mode, PriorityPolicy.HEADER, 64));
        for (int j = 1; j <= JOBS; j++)
        {
            final int[] peers = new int[WORKERS];
            for (int w = 0; w < WORKERS; w++)
            {
                peers[w] = 100 * j + w;
            }
            sw.addJob(new EsaJobConfig(j, WORKERS, lanes, BLOCKS_PER_JOB, 1, peers, 50 + j, 1L << 30));
        }
        sw.applyControl();
        return sw;
    }

    public static void main(final String[] args)
    {
        final int lanes = args.length > 0 ? Integer.parseInt(args[0]) : 256;
        final double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 2;
        final int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        final Scenario[] scenarios = new Scenario[SCENARIOS.length];
        for (int s = 0; s < SCENARIOS.length; s++)
        {
            scenarios[s] = scenario(SCENARIOS[s], lanes);
        }
        System.out.printf(Locale.ROOT, "%d lanes (%d-byte messages), %d workers per job, one thread, %.1f s each%n",
            lanes, InaggHeader.messageLength(lanes), WORKERS, seconds);
        final double[][] measured = new double[SCENARIOS.length][rounds];
        for (int round = -1; round < rounds; round++)
        {
            final String label = round < 0 ? "warm-up" : "round " + round;
            for (int s = 0; s < SCENARIOS.length; s++)
            {
                final double pps = run(scenarios[s], seconds);
                report(label, SCENARIOS[s], pps, lanes);
                if (round >= 0)
                {
                    measured[s][round] = pps;
                }
            }
        }
        for (int s = 0; s < SCENARIOS.length; s++)
        {
            java.util.Arrays.sort(measured[s]);
            System.out.printf(Locale.ROOT, "median   %-20s %7.2f Mpps  (min %.2f, max %.2f over %d rounds)%n",
                SCENARIOS[s], measured[s][rounds / 2] / 1e6, measured[s][0] / 1e6, measured[s][rounds - 1] / 1e6,
                rounds);
        }
        final EsaSwitch plain = (EsaSwitch)scenarios[1].handler();
        final EsaSwitch preempt = (EsaSwitch)scenarios[2].handler();
        System.out.printf(Locale.ROOT, "esa-no-preemption: %d completions, %d preemptions; esa-preemption: %d "
                + "completions, %d preemptions, %d to the server%n", plain.counter(EsaCounter.COMPLETIONS),
            plain.counter(EsaCounter.PREEMPTIONS), preempt.counter(EsaCounter.COMPLETIONS),
            preempt.counter(EsaCounter.PREEMPTIONS), preempt.counter(EsaCounter.FALLBACK_TOMBSTONE));
    }

    private static void report(final String round, final String scenario, final double pps, final int lanes)
    {
        System.out.printf(Locale.ROOT, "%-8s %-20s %7.2f Mpps  %6.1f Gb/s of lanes%n", round, scenario, pps / 1e6,
            pps * lanes * 4 * 8 / 1e9);
    }
}
