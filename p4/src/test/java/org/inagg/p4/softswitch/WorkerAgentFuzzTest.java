package org.inagg.p4.softswitch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.agrona.concurrent.Agent;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.p4.testing.JunkInput;
import org.inagg.p4.testing.JunkInput.Junk;
import org.inagg.protocol.AllReduceOperation;
import org.inagg.protocol.WorkerAgent;
import org.inagg.protocol.WorkerCounter;
import org.inagg.protocol.WorkerSettings;
import org.inagg.testing.HeapNetwork;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes the worker's receive path (docs/fuzzing.md): two real {@link WorkerAgent}s all-reduce a small tensor (float
 * or int32) through a {@link SoftwareSwitch} over a {@link HeapNetwork}, every duty cycle run in turn on the test
 * thread with a virtual clock, while junk reaches either worker from the switch's peer, the other worker, a stranger or
 * an unnamed sender, before, during and after the join.
 * <p>
 * Invariants: nothing thrown; both all-reduces complete (no stall, no failure) with the exact sum. Junk the protocol
 * must take as genuine is made genuine before delivery, since a worker cannot tell it from the real thing: a result
 * that names an outstanding packet exactly (job, slot, shadow copy, sequence, lane count) gets the packet's true sum
 * and, where the worker needs it, the true next exponent; a join answer from the switch's own peer is withheld.
 * Everything else must leave the workers unmoved. Head: byte 0 float or int32, 1 the tensor length,
 * 2 the switch's slots, 3 the floats' scale, 4..7 the values' seed.
 */
class WorkerAgentFuzzTest
{
    private static final int JOB = 1;
    private static final int WORKERS = 2;
    private static final int LANES = 8;
    private static final int SWITCH_PEER = 0;
    private static final int STRANGER = WORKERS + 1;
    private static final long CYCLE_NS = 10_000;
    private static final long RETRANSMIT_NS = 1_000_000;
    private static final long PEER_TIMEOUT_NS = 1_000_000_000;
    private static final int MAX_CYCLES = (int)(PEER_TIMEOUT_NS / CYCLE_NS * 2 + 1000);
    private static final FixedPointConverter CONVERTER = FixedPointConverter.best();
    /**
     * One network and one switch for every run: installing the job again resets the switch (slots, learned peers),
     * and creating nodes (their counters above all) would cost more than the run itself. Workers are new each run.
     */
    private static final HeapNetwork NETWORK;
    private static final SoftwareSwitch SWITCH;
    private static final int MAX_ELEMENTS = 48;
    /** Tensors reused run after run (native, as the Vector API converters want them); outputs refilled each run. */
    private static final MemorySegment[] SOURCES = new MemorySegment[WORKERS];
    private static final MemorySegment[] OUTPUTS = new MemorySegment[WORKERS];

    static
    {
        JunkInput.init();
        NETWORK = new HeapNetwork(WORKERS + 1, InaggHeader.messageLength(LANES));
        SWITCH = new SoftwareSwitch(NETWORK.endpoint(SWITCH_PEER), new CounterRegistry(64), 16);
        for (int w = 0; w < WORKERS; w++)
        {
            SOURCES[w] = Arena.global().allocate((long)MAX_ELEMENTS * Float.BYTES, 64);
            OUTPUTS[w] = Arena.global().allocate((long)MAX_ELEMENTS * Float.BYTES, 64);
        }
    }

    @FuzzTest(maxDuration = "10s")
    void shouldIgnoreJunkAndAllReduceExactly(final byte[] data)
    {
        new Run(JunkInput.parse(data)).run();
    }

    private static final class Run
    {
        private final JunkInput input;
        private final boolean floats;
        private final int elements;
        private final int slots;
        private final int blocks;
        private final int active;
        private final int lead;
        private final int total;
        private final MemorySegment[] sources = new MemorySegment[WORKERS];
        private final MemorySegment[] outputs = new MemorySegment[WORKERS];
        private final AllReduceOperation[] operations = new AllReduceOperation[WORKERS];
        private final WorkerAgent[] workers = new WorkerAgent[WORKERS];
        private final Agent[] agents = new Agent[WORKERS + 1];
        private final int[] agreed;
        private long nowNs;

        Run(final JunkInput input)
        {
            this.input = input;
            floats = (input.head(0) & 1) != 0;
            elements = 1 + input.head(1) % MAX_ELEMENTS;
            slots = 1 + input.head(2) % 4;
            blocks = (elements + LANES - 1) / LANES;
            active = Math.min(slots, blocks);
            lead = floats ? active : 0;
            total = blocks + lead;
            final int seed = input.headInt(4);
            final float scale = Math.scalb(1.0f, input.head(3) % 24 - 12);
            for (int w = 0; w < WORKERS; w++)
            {
                sources[w] = SOURCES[w].asSlice(0, (long)elements * Float.BYTES);
                outputs[w] = OUTPUTS[w].asSlice(0, (long)elements * Float.BYTES);
                outputs[w].fill((byte)0xFF);   // NaN, -1: an element the all-reduce never wrote shows
                for (int k = 0; k < elements; k++)
                {
                    final int value = seed * 31 + w * 1_000_003 + k * 7_919;
                    if (floats)
                    {
                        // Integers below 2^7 times a power of two: the fixed-point sum of two is exact.
                        sources[w].setAtIndex(ValueLayout.JAVA_FLOAT, k, (Math.floorMod(value, 255) - 127) * scale);
                    }
                    else
                    {
                        sources[w].setAtIndex(ValueLayout.JAVA_INT, k, value);
                    }
                }
                operations[w] = new AllReduceOperation(sources[w], outputs[w], elements, floats);
            }
            agreed = new int[blocks];
            for (int b = 0; b < blocks && floats; b++)
            {
                agreed[b] = Integer.MIN_VALUE;
                for (int w = 0; w < WORKERS; w++)
                {
                    agreed[b] = Math.max(agreed[b],
                        CONVERTER.blockExponent(sources[w], (long)b * LANES * Float.BYTES, blockLength(b)));
                }
            }
        }

        void run()
        {
            NETWORK.clear();
            SWITCH.addJob(new SwitchJobConfig(JOB, WORKERS, slots, LANES));
            final CounterRegistry registry = new CounterRegistry(32);
            agents[0] = SWITCH;
            for (int w = 0; w < WORKERS; w++)
            {
                final WorkerSettings settings = new WorkerSettings(JOB, w, WORKERS, SWITCH_PEER, 0, RETRANSMIT_NS,
                    PEER_TIMEOUT_NS, RETRANSMIT_NS, 16);
                workers[w] = new WorkerAgent(settings, NETWORK.endpoint(1 + w), CONVERTER, () -> nowNs, registry, 4);
                assertThat(workers[w].submit(operations[w])).isTrue();
                agents[1 + w] = workers[w];
            }
            for (final Agent agent : agents)
            {
                agent.onStart();
            }
            final int[] junkPeers = {SWITCH_PEER, STRANGER, 0, -1};
            for (final Junk junk : input.records())
            {
                if (junk.advance())
                {
                    for (int c = 1 + (junk.control() >>> 3 & 15); c > 0; c--)
                    {
                        cycle();
                    }
                }
                final int choice = junk.select(WORKERS * junkPeers.length);
                final int target = choice % WORKERS;
                // Choice 2 of the peer table: the other worker's endpoint.
                final int peerChoice = junkPeers[choice / WORKERS];
                final int peer = choice / WORKERS == 2 ? 1 + (1 - target) : peerChoice;
                final byte[] bytes = genuine(junk.bytes(), target, peer);
                if (bytes != null)
                {
                    workers[target].onMessage(MemorySegment.ofArray(bytes), 0, bytes.length, peer);
                }
            }
            int cycles = 0;
            while (!(operations[0].completion().isDone() && operations[1].completion().isDone()))
            {
                assertThat(++cycles).as("all-reduce stalled: %s", describe()).isLessThan(MAX_CYCLES);
                cycle();
            }
            for (int w = 0; w < WORKERS; w++)
            {
                assertThat(operations[w].completion()).as("worker %d: %s", w, describe()).isCompleted();
                for (int k = 0; k < elements; k++)
                {
                    if (floats)
                    {
                        float expected = 0;
                        for (int v = 0; v < WORKERS; v++)
                        {
                            expected += sources[v].getAtIndex(ValueLayout.JAVA_FLOAT, k);
                        }
                        assertThat(outputs[w].getAtIndex(ValueLayout.JAVA_FLOAT, k)).as("worker %d float %d", w, k)
                            .isEqualTo(expected);
                    }
                    else
                    {
                        int expected = 0;
                        for (int v = 0; v < WORKERS; v++)
                        {
                            expected += sources[v].getAtIndex(ValueLayout.JAVA_INT, k);
                        }
                        assertThat(outputs[w].getAtIndex(ValueLayout.JAVA_INT, k)).as("worker %d int %d", w, k)
                            .isEqualTo(expected);
                    }
                }
            }
        }

        private void cycle()
        {
            nowNs += CYCLE_NS;
            for (final Agent agent : agents)
            {
                try
                {
                    agent.doWork();
                }
                catch (final Exception e)
                {
                    throw new AssertionError(e);
                }
            }
        }

        private int blockLength(final int block)
        {
            return Math.min(LANES, elements - block * LANES);
        }

        /**
         * The junk as delivered: unchanged, unless it is what the worker must take as genuine (see the class
         * comment), in which case it is made so, or withheld (null).
         */
        private byte[] genuine(final byte[] junk, final int target, final int peer)
        {
            final MemorySegment m = MemorySegment.ofArray(junk);
            if (!new Junk(0, junk).wellFormed() || InaggHeader.jobId(m, 0) != JOB)
            {
                return junk;
            }
            final int type = InaggHeader.type(m, 0);
            if ((type == MessageType.JOIN_ACK || type == MessageType.REJECT) && peer == SWITCH_PEER
                && InaggHeader.workerId(m, 0) == target)
            {
                // The switch's answer to a JOIN it may not have had: withheld, the worker must believe it.
                return null;
            }
            if (type != MessageType.AGGREGATE || (InaggHeader.flags(m, 0) & InaggHeader.FLAG_RESULT) == 0)
            {
                return junk;
            }
            final int packet = InaggHeader.sequence(m, 0);
            if (packet < 0 || packet >= total || InaggHeader.slotIndex(m, 0) != packet % active
                || InaggHeader.shadowCopy(m, 0) != (packet / active & 1))
            {
                return junk;
            }
            final int block = packet - lead;
            final int count = block >= 0 ? blockLength(block) : 0;
            if (InaggHeader.elementCount(m, 0) != count)
            {
                return junk;
            }
            final byte[] result = junk.clone();
            final MemorySegment r = MemorySegment.ofArray(result);
            if (count > 0)
            {
                final MemorySegment lanes = MemorySegment.ofArray(new byte[count * Integer.BYTES]);
                final int[] sum = new int[count];
                for (int w = 0; w < WORKERS; w++)
                {
                    final long offset = (long)block * LANES * Float.BYTES;
                    if (floats)
                    {
                        CONVERTER.quantize(sources[w], offset, count, FixedPoint.shift(agreed[block], WORKERS),
                            lanes, 0);
                    }
                    else
                    {
                        CONVERTER.encodeInts(sources[w], offset, count, lanes, 0);
                    }
                    for (int k = 0; k < count; k++)
                    {
                        sum[k] += InaggHeader.element(lanes, -InaggHeader.PAYLOAD_OFFSET, k);
                    }
                }
                for (int k = 0; k < count; k++)
                {
                    InaggHeader.setElement(r, 0, k, sum[k]);
                }
            }
            final int next = InaggHeader.nextExponent(m, 0);
            if (floats && packet < blocks && next >= FixedPoint.MIN_EXPONENT && next <= FixedPoint.MAX_EXPONENT)
            {
                InaggHeader.setNextExponent(r, 0, agreed[packet]);
            }
            return result;
        }

        private String describe()
        {
            final StringBuilder text = new StringBuilder(floats ? "float" : "int32").append(" x ").append(elements)
                .append(", ").append(slots).append(" slots");
            for (int w = 0; w < WORKERS; w++)
            {
                text.append("; worker ").append(w).append(": sent ")
                    .append(workers[w].counter(WorkerCounter.PACKETS_SENT)).append(", retransmitted ")
                    .append(workers[w].counter(WorkerCounter.RETRANSMISSIONS)).append(", malformed ")
                    .append(workers[w].counter(WorkerCounter.MALFORMED)).append(", ")
                    .append(operations[w].completion());
            }
            return text.toString();
        }
    }
}
