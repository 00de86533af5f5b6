package org.inagg.agent;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.ConcurrentCountersManager;
import org.agrona.concurrent.status.CountersReader;

/**
 * The process's counters: fixed type ids and labels in Agrona's counters layout, written by agents with release
 * stores and readable from any thread (and, when the buffers are mapped to a file, from outside the process).
 */
public final class CounterRegistry
{
    private final ConcurrentCountersManager manager;

    /** A registry with room for {@code capacity} counters. */
    public CounterRegistry(final int capacity)
    {
        // Off-heap and cache-line aligned: atomic counter operations need aligned memory, which byte[] does not promise.
        final UnsafeBuffer values = new UnsafeBuffer(
            BufferUtil.allocateDirectAligned(capacity * CountersReader.COUNTER_LENGTH, 64));
        final UnsafeBuffer metadata = new UnsafeBuffer(
            BufferUtil.allocateDirectAligned(capacity * CountersReader.METADATA_LENGTH, 64));
        manager = new ConcurrentCountersManager(metadata, values);
    }

    public AtomicCounter newCounter(final String label, final int typeId)
    {
        return manager.newCounter(label, typeId);
    }

    public CountersReader reader()
    {
        return manager;
    }

    /** Sum of the values of every counter of {@code typeId}. */
    public long sum(final int typeId)
    {
        final long[] total = new long[1];
        manager.forEach((counterId, type, keyBuffer, label) ->
        {
            if (type == typeId)
            {
                total[0] += manager.getCounterValue(counterId);
            }
        });
        return total[0];
    }
}
