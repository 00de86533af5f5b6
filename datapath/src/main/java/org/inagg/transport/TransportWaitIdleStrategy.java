package org.inagg.transport;

import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;

/**
 * Idles by blocking in the kernel until the transport has something to receive, or a wait passed (so that the
 * agent's timers and request queue are looked at on time): a busy agent wakes as soon as a packet arrives, without the
 * up-to-a-millisecond sleep of a backoff park. The wait is 1 ms, doubled for every idle cycle in a row up to
 * {@code maxWaitNs}: a worker (timers due within milliseconds) keeps 1 ms, a switch with nothing to time can let an
 * idle port cost nothing. Transports that cannot wait (in-process rings, DPDK) are parked instead after a few spins,
 * like a backoff strategy.
 */
public final class TransportWaitIdleStrategy implements IdleStrategy
{
    private static final int SPINS = 16;
    private static final long FIRST_WAIT_NS = 1_000_000;

    private final Transport transport;
    private final long maxWaitNs;
    private int idles;

    /** @param transport the transport to wait on; null for none (the strategy parks). */
    public TransportWaitIdleStrategy(final Transport transport, final long maxWaitNs)
    {
        if (maxWaitNs <= 0)
        {
            throw new IllegalArgumentException("the longest wait must be positive, got " + maxWaitNs + " ns");
        }
        this.transport = transport;
        this.maxWaitNs = maxWaitNs;
    }

    @Override
    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            idles = 0;
            return;
        }
        idle();
    }

    @Override
    public void idle()
    {
        if (transport != null && transport.awaitReceive(Math.min(maxWaitNs, FIRST_WAIT_NS << Math.min(idles, 20))))
        {
            idles++;
            return;
        }
        if (idles++ < SPINS)
        {
            Thread.onSpinWait();
            return;
        }
        LockSupport.parkNanos(Math.min(maxWaitNs, 1L << Math.min(idles - SPINS + 10, 40)));
    }

    @Override
    public void reset()
    {
        idles = 0;
    }

    @Override
    public String alias()
    {
        return "block";
    }
}
