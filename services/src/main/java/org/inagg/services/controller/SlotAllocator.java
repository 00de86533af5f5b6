package org.inagg.services.controller;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Ranges of the switch's shared register pool, {@code [0, poolSlots)}: each admitted job gets one contiguous range of
 * its own ({@code slotBase}, {@code slots}), first fit. <b>ESA-aware</b>: the ESA aggregator pool, where one is
 * configured, is reserved (ESA jobs hash into it; a slot-protocol range inside it would be overwritten by them), and so
 * are ranges held by jobs the controller found on a switch but did not install. Not thread-safe (the
 * {@link RegistryState}'s monitor).
 */
final class SlotAllocator
{
    /** A range {@code [base, base + slots)} held by {@code owner}. */
    record Range(int base, int slots, String owner)
    {
        int end()
        {
            return base + slots;
        }

        boolean overlaps(final int otherBase, final int otherSlots)
        {
            return base < otherBase + otherSlots && otherBase < base + slots;
        }
    }

    private final int poolSlots;
    private final List<Range> taken = new ArrayList<>();

    SlotAllocator(final int poolSlots)
    {
        this.poolSlots = poolSlots;
    }

    int poolSlots()
    {
        return poolSlots;
    }

    /** Reserves a range for {@code owner} (the ESA pool, a foreign job); false if it overlaps one taken already. */
    boolean reserve(final int base, final int slots, final String owner)
    {
        if (base < 0 || slots < 1 || base + slots > poolSlots || overlapping(base, slots) != null)
        {
            return false;
        }
        taken.add(new Range(base, slots, owner));
        return true;
    }

    /** The first free range of {@code slots} slots (taken for {@code owner}), or -1 when the pool has none. */
    int allocate(final int slots, final String owner)
    {
        taken.sort(Comparator.comparingInt(Range::base));
        int candidate = 0;
        for (final Range range : taken)
        {
            if (range.base() - candidate >= slots)
            {
                break;
            }
            candidate = Math.max(candidate, range.end());
        }
        if (candidate + slots > poolSlots)
        {
            return -1;
        }
        taken.add(new Range(candidate, slots, owner));
        return candidate;
    }

    /** Frees the range starting at {@code base}; false if none starts there. */
    boolean free(final int base)
    {
        return taken.removeIf(range -> range.base() == base);
    }

    /** The range overlapping {@code [base, base + slots)}, or null. */
    Range overlapping(final int base, final int slots)
    {
        for (final Range range : taken)
        {
            if (range.overlaps(base, slots))
            {
                return range;
            }
        }
        return null;
    }

    /** Free slots in total (not necessarily contiguous). */
    int freeSlots()
    {
        int used = 0;
        for (final Range range : taken)
        {
            used += range.slots();
        }
        return poolSlots - used;
    }

    List<Range> ranges()
    {
        return List.copyOf(taken);
    }
}
