package org.inagg.protocol;

import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.agent.CounterRegistry;

/**
 * One worker's {@link WorkerCounter}s in a {@link CounterRegistry}, readable from outside the process: written with
 * release stores by the agent's thread only, so a reader never sees a torn value. The gauge
 * {@link WorkerCounter#SLOTS_IN_USE} is stored only when it changed, not once per duty cycle.
 */
final class WorkerCounters
{
    private final AtomicCounter[] counters = new AtomicCounter[WorkerCounter.values().length];
    /** The value last published to {@link WorkerCounter#SLOTS_IN_USE}. */
    private int publishedSlotsInUse;

    /** Labels start with {@code who} ("job J worker W"). */
    WorkerCounters(final CounterRegistry registry, final String who, final int jobId, final int workerId)
    {
        for (final WorkerCounter counter : WorkerCounter.values())
        {
            counters[counter.ordinal()] = registry.newCounter(counter, who + ": " + counter.label(), jobId, workerId);
        }
    }

    long get(final WorkerCounter counter)
    {
        return counters[counter.ordinal()].get();
    }

    void increment(final WorkerCounter counter)
    {
        counters[counter.ordinal()].incrementRelease();
    }

    void add(final WorkerCounter counter, final long delta)
    {
        counters[counter.ordinal()].getAndAddRelease(delta);
    }

    /** Publishes {@link WorkerCounter#SLOTS_IN_USE} if it changed. */
    void slotsInUse(final int outstanding)
    {
        if (outstanding != publishedSlotsInUse)
        {
            publishedSlotsInUse = outstanding;
            counters[WorkerCounter.SLOTS_IN_USE.ordinal()].setRelease(outstanding);
        }
    }
}
