package org.inagg.transport;

import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.agent.CounterKey;
import org.inagg.agent.CounterRegistry;

/**
 * One transport's {@link TransportCounter}s. A transport starts with a set of its own, in memory only; a node that
 * keeps a counters file (a CLI process, {@code inagg stat}) {@link Transport#countInto moves} them into it before traffic
 * flows. Updated by the transport's one polling thread with release stores: no lock, no allocation, no system call per
 * message; readable from any thread.
 */
public final class TransportCounters
{
    private static final TransportCounter[] ALL = TransportCounter.values();

    /** All zero: the counters of a transport that does not count (a test's fake). */
    public static final TransportCounters NOT_COUNTED = inMemory();

    private final AtomicCounter[] counters = new AtomicCounter[ALL.length];

    private TransportCounters(final CounterRegistry registry, final String owner, final int jobId, final int workerId)
    {
        for (final TransportCounter counter : ALL)
        {
            counters[counter.ordinal()] = registry.newCounter(counter,
                owner.isEmpty() ? counter.label() : owner + ": " + counter.label(), jobId, workerId);
        }
    }

    /** A set in this process's memory only, for a transport nobody registered. */
    public static TransportCounters inMemory()
    {
        return new TransportCounters(new CounterRegistry(ALL.length), "transport", CounterKey.NONE, CounterKey.NONE);
    }

    /**
     * A set in {@code registry}, labelled {@code "<owner> transport: <what>"}, for a job's worker or (with
     * {@link CounterKey#NONE}) not per job. Takes {@link TransportCounter#values()}{@code .length} counters of its room.
     */
    public static TransportCounters in(final CounterRegistry registry, final String owner, final int jobId,
        final int workerId)
    {
        return new TransportCounters(registry, owner + " transport", jobId, workerId);
    }

    /** The value of {@code counter}. */
    public long get(final TransportCounter counter)
    {
        return counters[counter.ordinal()].get();
    }

    /** Adds every value of this set to {@code other}'s (a transport moving its counts into a registered set). */
    public void addTo(final TransportCounters other)
    {
        for (int i = 0; i < counters.length; i++)
        {
            other.counters[i].getAndAddRelease(counters[i].get());
        }
    }

    /** One message of {@code bytes} committed (by the transport that owns this set, as all the updates below). */
    public void sent(final int bytes)
    {
        counters[TransportCounter.MESSAGES_SENT.ordinal()].incrementRelease();
        counters[TransportCounter.BYTES_SENT.ordinal()].getAndAddRelease(bytes);
    }

    /** One message of {@code bytes} handed up. */
    public void received(final int bytes)
    {
        counters[TransportCounter.MESSAGES_RECEIVED.ordinal()].incrementRelease();
        counters[TransportCounter.BYTES_RECEIVED.ordinal()].getAndAddRelease(bytes);
    }

    /** One more of {@code counter}. */
    public void increment(final TransportCounter counter)
    {
        counters[counter.ordinal()].incrementRelease();
    }

    /** {@code n} more of {@code counter}. */
    public void add(final TransportCounter counter, final long n)
    {
        counters[counter.ordinal()].getAndAddRelease(n);
    }

    /** One line: every counter that is not zero, e.g. {@code messages sent 12, message bytes sent 960}. */
    public String describe()
    {
        final StringBuilder line = new StringBuilder();
        for (final TransportCounter counter : ALL)
        {
            final long value = get(counter);
            if (value != 0)
            {
                line.append(line.isEmpty() ? "" : ", ").append(counter.label()).append(' ').append(value);
            }
        }
        return line.isEmpty() ? "nothing counted" : line.toString();
    }
}
