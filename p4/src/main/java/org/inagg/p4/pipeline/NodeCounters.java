package org.inagg.p4.pipeline;

import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.agent.CounterDescriptor;
import org.inagg.agent.CounterRegistry;

/**
 * The counters of one node: every constant of its family (an enum of {@link CounterDescriptor}s) registered once,
 * reachable by the family's own constant and by the shared {@link NodeCounter} name. Incrementing is one array load
 * and one ordered add: no allocation on the hot path.
 *
 * @param <E> the node's counter family.
 */
public final class NodeCounters<E extends Enum<E> & CounterDescriptor>
{
    private final AtomicCounter[] family;
    private final AtomicCounter[] shared = new AtomicCounter[NodeCounter.values().length];

    /**
     * @param prefix how the labels name the node ("switch", "esa switch", "parameter server").
     * @throws IllegalArgumentException if the family lacks a {@link NodeCounter} name.
     */
    public NodeCounters(final CounterRegistry registry, final Class<E> type, final String prefix)
    {
        final E[] constants = type.getEnumConstants();
        this.family = new AtomicCounter[constants.length];
        for (final E counter : constants)
        {
            family[counter.ordinal()] = registry.newCounter(counter, prefix + ": " + counter.label());
        }
        for (final NodeCounter name : NodeCounter.values())
        {
            shared[name.ordinal()] = family[of(type, name).ordinal()];
        }
    }

    /** The family's constant of a shared name. */
    public static <E extends Enum<E>> E of(final Class<E> type, final NodeCounter name)
    {
        try
        {
            return Enum.valueOf(type, name.name());
        }
        catch (final IllegalArgumentException e)
        {
            throw new IllegalArgumentException(type.getSimpleName() + " lacks the node counter " + name
                + " every switch-side node counts", e);
        }
    }

    public void increment(final NodeCounter counter)
    {
        shared[counter.ordinal()].incrementRelease();
    }

    public void increment(final E counter)
    {
        family[counter.ordinal()].incrementRelease();
    }

    public void add(final E counter, final long delta)
    {
        family[counter.ordinal()].getAndAddRelease(delta);
    }

    public long get(final E counter)
    {
        return family[counter.ordinal()].get();
    }
}
