package org.inagg.agent.counters;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.inagg.agent.CounterKey;

/** The counters of a {@link CountersReader} at one moment, in counter id order. */
public record CountersSnapshot(long nanoTime, List<Sample> samples)
{
    /** One counter: id, type id, label, key (metric name, job, worker) and value. */
    public record Sample(int counterId, int typeId, String label, CounterKey key, long value)
    {
    }

    /**
     * Reads every allocated counter of {@code counters} now. Walks the records as {@link CountersReader#forEach(
     * CountersReader.MetaData)} does, but a label length outside 0..{@link CountersReader#MAX_LABEL_LENGTH} (a damaged
     * or foreign counters file: forEach would allocate that many bytes and read past the record) gives a label that
     * says so instead of an exception.
     */
    public static CountersSnapshot take(final CountersReader counters)
    {
        final AtomicBuffer metadata = counters.metaDataBuffer();
        final List<Sample> samples = new ArrayList<>();
        for (int counterId = 0, offset = 0; offset + CountersReader.METADATA_LENGTH <= metadata.capacity();
            counterId++, offset += CountersReader.METADATA_LENGTH)
        {
            final int state = metadata.getIntVolatile(offset);
            if (state == CountersReader.RECORD_UNUSED)
            {
                break;
            }
            if (state != CountersReader.RECORD_ALLOCATED)
            {
                continue;
            }
            final int typeId = metadata.getInt(offset + CountersReader.TYPE_ID_OFFSET);
            final int labelLength = metadata.getIntVolatile(offset + CountersReader.LABEL_OFFSET);
            final String label = labelLength >= 0 && labelLength <= CountersReader.MAX_LABEL_LENGTH
                ? metadata.getStringWithoutLengthAscii(offset + CountersReader.LABEL_OFFSET + Integer.BYTES, labelLength)
                : "(counter " + counterId + ": bad label length " + labelLength + ")";
            final CounterKey key = CounterKey.read(typeId,
                new UnsafeBuffer(metadata, offset + CountersReader.KEY_OFFSET, CountersReader.MAX_KEY_LENGTH), 0);
            samples.add(new Sample(counterId, typeId, label, key, counters.getCounterValue(counterId)));
        }
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
