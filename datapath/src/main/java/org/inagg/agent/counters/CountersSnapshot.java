package org.inagg.agent.counters;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.status.CountersReader;
import org.inagg.agent.CounterKey;

/** The counters of a {@link CountersReader} at one moment, in counter id order. */
public record CountersSnapshot(long nanoTime, List<Sample> samples)
{
    /** One counter: id, type id, label, key (metric name, job, worker) and value. */
    public record Sample(int counterId, int typeId, String label, CounterKey key, long value)
    {
    }

    /** Reads every allocated counter of {@code counters} now. */
    public static CountersSnapshot take(final CountersReader counters)
    {
        final List<Sample> samples = new ArrayList<>();
        counters.forEach((counterId, typeId, keyBuffer, label) -> samples.add(new Sample(counterId, typeId, label,
            CounterKey.read(typeId, keyBuffer, 0), counters.getCounterValue(counterId))));
        return new CountersSnapshot(System.nanoTime(), List.copyOf(samples));
    }

    /** The sample of counter {@code counterId} if it has the same type and label here, else null. */
    public Sample find(final Sample other)
    {
        for (final Sample sample : samples)
        {
            if (sample.counterId() == other.counterId())
            {
                return sample.typeId() == other.typeId() && sample.label().equals(other.label()) ? sample : null;
            }
        }
        return null;
    }
}
