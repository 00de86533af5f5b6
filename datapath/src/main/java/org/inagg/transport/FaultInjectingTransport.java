package org.inagg.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

/**
 * Decorates a transport with seeded faults on the receive side: drops, duplicates, and delays that reorder (see
 * {@link FaultConfig}). Held messages are copied into a fixed pool of frames owned by the decorator; when the pool is
 * full a message is delivered at once. Sending passes straight through. No allocation after construction.
 */
public final class FaultInjectingTransport extends TransportDecorator implements MessageHandler
{
    private static final int HELD_FRAMES = 1024;

    private final FaultConfig config;
    private final SplittableRandom random;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment held;
    private final int frameLength;
    private final long[] dueNs = new long[HELD_FRAMES];
    private final int[] heldLength = new int[HELD_FRAMES];
    private final int[] heldPeer = new int[HELD_FRAMES];
    private final int[] freeFrames = new int[HELD_FRAMES];
    private final int[] usedFrames = new int[HELD_FRAMES];
    private int freeCount = HELD_FRAMES;
    private int usedCount;
    private MessageHandler handler;
    private long nowNs;
    private int delivered;
    private long dropped;
    private long duplicated;
    private long delayed;

    public FaultInjectingTransport(final Transport inner, final FaultConfig config)
    {
        super(inner);
        this.config = config;
        this.random = new SplittableRandom(config.seed());
        this.frameLength = inner.maxMessageLength();
        this.held = arena.allocate((long)frameLength * HELD_FRAMES, 64);
        for (int i = 0; i < HELD_FRAMES; i++)
        {
            freeFrames[i] = i;
        }
    }

    /** Wraps {@code inner} unless {@code config} injects nothing. */
    public static Transport wrap(final Transport inner, final FaultConfig config)
    {
        return config.isNone() ? inner : new FaultInjectingTransport(inner, config);
    }

    public long dropped()
    {
        return dropped;
    }

    public long duplicated()
    {
        return duplicated;
    }

    public long delayed()
    {
        return delayed;
    }

    @Override
    public int poll(final MessageHandler handler, final int limit)
    {
        this.handler = handler;
        this.nowNs = System.nanoTime();
        delivered = 0;
        releaseDue(limit);
        if (delivered < limit)
        {
            inner.poll(this, limit - delivered);
        }
        return delivered;
    }

    /**
     * Waits on the inner transport, but no longer than until the first held message falls due (it falls due without any
     * packet arriving); answers false at once when one is due already. A receiver with messages held back thus still
     * wakes on the next packet, as it would on a real network whose delays are in flight, instead of being parked.
     */
    @Override
    public boolean awaitReceive(final long timeoutNs)
    {
        if (usedCount == 0)
        {
            return inner.awaitReceive(timeoutNs);
        }
        final long now = System.nanoTime();
        long untilDue = timeoutNs;
        for (int i = 0; i < usedCount; i++)
        {
            untilDue = Math.min(untilDue, dueNs[usedFrames[i]] - now);
        }
        return untilDue > 0 && inner.awaitReceive(untilDue);
    }

    @Override
    public void onMessage(final MemorySegment memory, final long offset, final int length, final int peer)
    {
        final double r = random.nextDouble();
        if (r < config.dropRate())
        {
            dropped++;
            return;
        }
        if (r < config.dropRate() + config.duplicateRate())
        {
            duplicated++;
            deliver(memory, offset, length, peer);
            // The second copy may come at once or late, so late duplicates are exercised too.
            if (!hold(memory, offset, length, peer))
            {
                deliver(memory, offset, length, peer);
            }
            return;
        }
        if (r < config.dropRate() + config.duplicateRate() + config.reorderRate() && hold(memory, offset, length, peer))
        {
            delayed++;
            return;
        }
        deliver(memory, offset, length, peer);
    }

    private void deliver(final MemorySegment memory, final long offset, final int length, final int peer)
    {
        handler.onMessage(memory, offset, length, peer);
        delivered++;
    }

    private boolean hold(final MemorySegment memory, final long offset, final int length, final int peer)
    {
        // Drawn whether or not the message can be held, so that the seed alone decides every later message's fate: a
        // draw skipped when all frames were busy (which depends on timing) shifted the sequence, and the same seed
        // then dropped and duplicated other messages on a loaded machine (TransportTest, CI).
        final long delayNs = config.maxDelayNs() == 0 ? 0 : random.nextLong(config.maxDelayNs() + 1);
        if (freeCount == 0 || length > frameLength)
        {
            return false;
        }
        final int frame = freeFrames[--freeCount];
        MemorySegment.copy(memory, offset, held, (long)frame * frameLength, length);
        heldLength[frame] = length;
        heldPeer[frame] = peer;
        dueNs[frame] = nowNs + delayNs;
        usedFrames[usedCount++] = frame;
        return true;
    }

    private void releaseDue(final int limit)
    {
        for (int i = 0; i < usedCount && delivered < limit; )
        {
            final int frame = usedFrames[i];
            if (dueNs[frame] - nowNs <= 0)
            {
                usedFrames[i] = usedFrames[--usedCount];
                freeFrames[freeCount++] = frame;
                deliver(held, (long)frame * frameLength, heldLength[frame], heldPeer[frame]);
            }
            else
            {
                i++;
            }
        }
    }

    @Override
    public void close()
    {
        inner.close();
        if (arena.scope().isAlive())
        {
            arena.close(); // once: a node whose launch failed closes what its agent may have closed already
        }
    }
}
