package org.inagg.p4.esa.sim;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.SplittableRandom;

import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.WireCheck;

/**
 * A worker reduced to the slot protocol's packet rules, for the virtual-time harness: int32 blocks v = 0 .. B-1,
 * block v to slot {@code v mod A} (A = the window), copy {@code (v / A) mod 2}, sequence v, the next block of a slot
 * sent when the slot's result arrives (after a random host delay, the straggling that keeps a real job's packets
 * apart), a retransmission (flagged) when no result came within the timeout, doubled per retry up to 8x. A result is
 * accepted only for the slot's outstanding (copy, sequence), from any sender, as {@code WorkerAgent} does, and its
 * lanes are compared with the exact int sum of every worker's block, which {@link #value} defines.
 */
public final class ScriptedWorker implements MessageHandler
{
    private final VirtualNetwork network;
    private final Transport transport;
    private final int job;
    private final int worker;
    private final int workers;
    private final int blocks;
    private final int window;
    private final int lanes;
    private final int priority;
    private final long timeoutNs;
    private final long maxHostDelayNs;
    private final SplittableRandom random;
    private final int[] outstanding;
    private final int[] retries;
    private final long[] sentAt;
    private long startNs = -1;
    private long finishNs = -1;
    private int completed;
    private long verifiedResults;
    private long wrongResults;
    private long ignoredResults;
    private long retransmissions;

    @SuppressWarnings("checkstyle:ParameterNumber")
    public ScriptedWorker(final VirtualNetwork network, final int node, final int job, final int worker,
        final int workers, final int blocks, final int window, final int lanes, final int priority,
        final long timeoutNs, final long maxHostDelayNs, final long seed)
    {
        this.network = network;
        this.transport = network.transport(node);
        this.job = job;
        this.worker = worker;
        this.workers = workers;
        this.blocks = blocks;
        this.window = Math.min(window, blocks);
        this.lanes = lanes;
        this.priority = priority;
        this.timeoutNs = timeoutNs;
        this.maxHostDelayNs = maxHostDelayNs;
        this.random = new SplittableRandom(seed);
        this.outstanding = new int[this.window];
        this.retries = new int[this.window];
        this.sentAt = new long[this.window];
        Arrays.fill(outstanding, -1);
    }

    /** Lane k of worker w's block v of job j: small, signed, different everywhere. */
    public static int value(final int j, final int w, final int v, final int k)
    {
        long h = j * 0x9E3779B97F4A7C15L + w * 0xC2B2AE3D27D4EB4FL + v * 0x165667B19E3779F9L + k * 0x27D4EB2F165667C5L;
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 32;
        return (int)(h % 100_000);
    }

    /** Starts sending at virtual time {@code at}. */
    public void start(final long at)
    {
        network.schedule(at, () ->
        {
            startNs = network.now();
            for (int s = 0; s < window; s++)
            {
                send(s, s, false);
            }
        });
    }

    public boolean done()
    {
        return completed == blocks;
    }

    public long startNs()
    {
        return startNs;
    }

    public long finishNs()
    {
        return finishNs;
    }

    public int completedBlocks()
    {
        return completed;
    }

    public long verifiedResults()
    {
        return verifiedResults;
    }

    public long wrongResults()
    {
        return wrongResults;
    }

    public long ignoredResults()
    {
        return ignoredResults;
    }

    public long retransmissions()
    {
        return retransmissions;
    }

    private void send(final int slot, final int v, final boolean retransmission)
    {
        final long offset = transport.claim(VirtualNetwork.SWITCH, InaggHeader.messageLength(lanes));
        final MemorySegment m = transport.txMemory();
        final int flags = InaggHeader.FLAG_INT32 | (retransmission ? InaggHeader.FLAG_RETRANSMIT : 0);
        InaggHeader.write(m, offset, MessageType.AGGREGATE, flags, job, worker, slot, (v / window) & 1, v, lanes, 0,
            InaggHeader.NO_EXPONENT, priority);
        for (int k = 0; k < lanes; k++)
        {
            InaggHeader.setElement(m, offset, k, value(job, worker, v, k));
        }
        transport.commit();
        if (retransmission)
        {
            retransmissions++;
            retries[slot]++;
        }
        else
        {
            outstanding[slot] = v;
            retries[slot] = 0;
        }
        sentAt[slot] = network.now();
        final long timeout = timeoutNs << Math.min(retries[slot], 3);
        network.schedule(network.now() + timeout, () -> onTimer(slot, v));
    }

    private void onTimer(final int slot, final int v)
    {
        final long timeout = timeoutNs << Math.min(retries[slot], 3);
        if (outstanding[slot] == v && network.now() - sentAt[slot] >= timeout)
        {
            send(slot, v, true);
        }
    }

    @Override
    public void onMessage(final MemorySegment m, final long o, final int length, final int peer)
    {
        if (InaggHeader.check(m, o, length) != WireCheck.OK || InaggHeader.type(m, o) != MessageType.AGGREGATE
            || (InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) == 0 || InaggHeader.jobId(m, o) != job)
        {
            ignoredResults++;
            return;
        }
        final int slot = InaggHeader.slotIndex(m, o);
        final int v = InaggHeader.sequence(m, o);
        if (slot >= window || outstanding[slot] != v || InaggHeader.shadowCopy(m, o) != ((v / window) & 1)
            || InaggHeader.workerId(m, o) != worker)
        {
            ignoredResults++;
            return;
        }
        boolean exact = InaggHeader.elementCount(m, o) == lanes;
        for (int k = 0; exact && k < lanes; k++)
        {
            int sum = 0;
            for (int w = 0; w < workers; w++)
            {
                sum += value(job, w, v, k);
            }
            exact = InaggHeader.element(m, o, k) == sum;
        }
        if (exact)
        {
            verifiedResults++;
        }
        else
        {
            wrongResults++;
        }
        outstanding[slot] = -1;
        completed++;
        final int next = v + window;
        if (next < blocks)
        {
            final long delay = maxHostDelayNs > 0 ? random.nextLong(maxHostDelayNs + 1) : 0;
            network.schedule(network.now() + delay, () -> send(slot, next, false));
        }
        else if (completed == blocks)
        {
            finishNs = network.now();
        }
    }
}
