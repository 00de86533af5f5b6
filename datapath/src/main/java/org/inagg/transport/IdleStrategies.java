package org.inagg.transport;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/** Idle strategies chosen by name, as in configuration files and on the command line. */
public final class IdleStrategies
{
    /** The names {@link #byName} accepts. */
    public static final String NAMES = "block[:N], spin, yield, backoff, sleep-ns[:N], noop";
    /** Blocking in the kernel until a packet or the next 1 ms tick: ~0% CPU when idle, no park latency when busy. */
    public static final String DEFAULT = "block";
    private static final long BLOCK_DEFAULT_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * For nodes with nothing to time (switch, parameter server): the wait grows to 100 ms while idle, so an idle node
     * costs about no CPU; a packet still wakes it at once.
     */
    public static final String SERVICE_DEFAULT = "block:100000000";

    private IdleStrategies()
    {
    }

    /**
     * @param name {@code spin} (busy spin, lowest latency, a core each), {@code yield}, {@code backoff} (spin, yield,
     *             then park up to 1 ms), {@code sleep-ns} or {@code sleep-ns:N} (park N ns, default 100 us), {@code noop}.
     */
    public static IdleStrategy byName(final String name)
    {
        return byName(name, null);
    }

    /**
     * As {@link #byName(String)}, and {@code block} or {@code block:N}: wait in the kernel on {@code transport} until a
     * packet arrives, 1 ms at first and longer while idle in a row, at most N ns (default 1 ms, so timers run on
     * time); where the transport cannot block (or none is given) it spins briefly and parks instead. Busy polling
     * ({@code spin}) is the opt-in for dedicated cores.
     */
    public static IdleStrategy byName(final String name, final org.inagg.transport.Transport transport)
    {
        if (name.equals("block") || name.startsWith("block:"))
        {
            long ns = BLOCK_DEFAULT_NS;
            if (name.startsWith("block:"))
            {
                try
                {
                    ns = Long.parseLong(name.substring("block:".length()));
                }
                catch (final NumberFormatException ex)
                {
                    throw new IllegalArgumentException("bad wait in idle strategy '" + name + "': " + ex.getMessage());
                }
                if (ns <= 0)
                {
                    throw new IllegalArgumentException("the wait in idle strategy '" + name + "' must be positive");
                }
            }
            return new TransportWaitIdleStrategy(transport, ns);
        }
        if (name.startsWith("sleep-ns"))
        {
            long ns = TimeUnit.MICROSECONDS.toNanos(100);
            if (name.startsWith("sleep-ns:"))
            {
                try
                {
                    ns = Long.parseLong(name.substring("sleep-ns:".length()));
                }
                catch (final NumberFormatException ex)
                {
                    throw new IllegalArgumentException("bad sleep in idle strategy '" + name + "': " + ex.getMessage());
                }
            }
            return new SleepingIdleStrategy(ns);
        }
        return switch (name)
        {
            case "spin" -> new BusySpinIdleStrategy();
            case "yield" -> new YieldingIdleStrategy();
            case "backoff" -> new BackoffIdleStrategy(16, 16, TimeUnit.MICROSECONDS.toNanos(1),
                TimeUnit.MILLISECONDS.toNanos(1));
            case "noop" -> NoOpIdleStrategy.INSTANCE;
            default -> throw new IllegalArgumentException("unknown idle strategy '" + name + "'; use one of " + NAMES);
        };
    }
}
