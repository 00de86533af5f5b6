package org.inagg.agent;

import org.agrona.BufferUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.ConcurrentCountersManager;
import org.agrona.concurrent.status.CountersReader;

/**
 * The process's counters: fixed type ids and labels in Agrona's counters layout, written by agents with release
 * stores and readable from any thread, and from outside the process when the buffers are those of a
 * {@link org.inagg.agent.counters.CountersFile}. Each counter's key ({@link CounterKey}) names the metric it is
 * exported as and, for per-job counters, the job and worker. Allocation takes a lock; the counters it returns are
 * updated without one and without allocating.
 */
public final class CounterRegistry
{
    private final ConcurrentCountersManager manager;

    /** A registry with room for {@code capacity} counters, in this process's memory only. */
    public CounterRegistry(final int capacity)
    {
        // Off-heap and cache-line aligned: atomic counter operations need aligned memory, which byte[] does not promise.
        this(new UnsafeBuffer(BufferUtil.allocateDirectAligned(capacity * CountersReader.METADATA_LENGTH, 64)),
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(capacity * CountersReader.COUNTER_LENGTH, 64)));
    }

    /**
     * A registry on given buffers (a mapped file's), in Agrona's layout: {@code metadata} of
     * {@link CountersReader#METADATA_LENGTH} bytes per counter, {@code values} of {@link CountersReader#COUNTER_LENGTH}.
     */
    public CounterRegistry(final AtomicBuffer metadata, final AtomicBuffer values)
    {
        manager = new ConcurrentCountersManager(metadata, values);
    }

    /** A counter with no metric name of its own (exported as {@code inagg_counter_<typeId>}). */
    public AtomicCounter newCounter(final String label, final int typeId)
    {
        return manager.newCounter(label, typeId, key -> CounterKey.write(key, null, CounterKey.NONE, CounterKey.NONE));
    }

    /** A counter of {@code descriptor}'s type, not per job. */
    public AtomicCounter newCounter(final CounterDescriptor descriptor, final String label)
    {
        return newCounter(descriptor, label, CounterKey.NONE, CounterKey.NONE);
    }

    /** A counter of {@code descriptor}'s type for one job and worker ({@link CounterKey#NONE} for neither). */
    public AtomicCounter newCounter(final CounterDescriptor descriptor, final String label, final int jobId,
        final int workerId)
    {
        return manager.newCounter(label, descriptor.typeId(),
            key -> CounterKey.write(key, descriptor, jobId, workerId));
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
