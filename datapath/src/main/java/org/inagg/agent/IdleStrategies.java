package org.inagg.agent;

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
    public static final String NAMES = "spin, yield, backoff, sleep-ns[:N], noop";
    public static final String DEFAULT = "backoff";

    private IdleStrategies()
    {
    }

    /**
     * @param name {@code spin} (busy spin, lowest latency, a core each), {@code yield}, {@code backoff} (spin, yield,
     *             then park up to 1 ms), {@code sleep-ns} or {@code sleep-ns:N} (park N ns, default 100 us), {@code noop}.
     */
    public static IdleStrategy byName(final String name)
    {
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
