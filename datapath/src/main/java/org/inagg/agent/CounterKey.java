package org.inagg.agent;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.status.CountersReader;

/**
 * The key of an inagg counter: what a reader outside the process needs to export it without knowing the counter enums
 * (the file is self-describing: {@code inagg stat} and the Prometheus endpoint read only this and the label). It lives
 * in the key area of the counter's Agrona metadata record ({@link CountersReader#MAX_KEY_LENGTH} bytes), little-endian:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                   job id (-1: not per job)                    |  0
 *  +---------------------------------------------------------------+
 *  |                 worker id (-1: not per worker)                |  4
 *  +-------------------------------+-------------------------------+
 *  |    flags (bit 0: gauge)       |    metric name length (n)     |  8
 *  +-------------------------------+-------------------------------+
 *  |        metric name, n bytes of ASCII [a-z0-9_], n &lt;= 100  ...  | 12
 *  +---------------------------------------------------------------+
 * </pre>
 * A counter allocated without a descriptor has n = 0: readers name it {@code inagg_counter_<type id>} (the type id
 * unsigned, so that the name stays a Prometheus name).
 */
public final class CounterKey
{
    /** What a Prometheus metric name may be (compiled once: counters are allocated at start, not per packet). */
    private static final Pattern METRIC_NAME = Pattern.compile("[a-z_][a-z0-9_]*");

    /** Job or worker id of a counter that is not per job or per worker. */
    public static final int NONE = -1;
    public static final int JOB_ID_OFFSET = 0;
    public static final int WORKER_ID_OFFSET = 4;
    public static final int FLAGS_OFFSET = 8;
    public static final int NAME_LENGTH_OFFSET = 10;
    public static final int NAME_OFFSET = 12;
    public static final int MAX_NAME_LENGTH = 100;
    public static final int FLAG_GAUGE = 1;

    private final int jobId;
    private final int workerId;
    private final boolean gauge;
    private final String metricName;

    public CounterKey(final int jobId, final int workerId, final boolean gauge, final String metricName)
    {
        this.jobId = jobId;
        this.workerId = workerId;
        this.gauge = gauge;
        this.metricName = metricName;
    }

    /** Writes the key of {@code descriptor} (null: no metric name) into a counter's key area. */
    static void write(final MutableDirectBuffer key, final CounterDescriptor descriptor, final int jobId,
        final int workerId)
    {
        key.putInt(JOB_ID_OFFSET, jobId);
        key.putInt(WORKER_ID_OFFSET, workerId);
        key.putShort(FLAGS_OFFSET, (short)(descriptor != null && descriptor.gauge() ? FLAG_GAUGE : 0));
        if (descriptor == null)
        {
            key.putShort(NAME_LENGTH_OFFSET, (short)0);
            return;
        }
        final String name = descriptor.metricName();
        if (name.length() > MAX_NAME_LENGTH || !METRIC_NAME.matcher(name).matches())
        {
            throw new IllegalArgumentException("metric name must be [a-z_][a-z0-9_]* of at most " + MAX_NAME_LENGTH
                + " characters: '" + name + "'");
        }
        key.putShort(NAME_LENGTH_OFFSET, (short)name.length());
        key.putStringWithoutLengthAscii(NAME_OFFSET, name);
    }

    /**
     * Reads the key of counter {@code typeId} from its key area (as {@link CountersReader#forEach(
     * CountersReader.MetaData)} hands it over).
     */
    public static CounterKey read(final int typeId, final DirectBuffer key, final int offset)
    {
        final int nameLength = key.getShort(offset + NAME_LENGTH_OFFSET);
        if (nameLength <= 0 || nameLength > MAX_NAME_LENGTH)
        {
            return new CounterKey(NONE, NONE, false, "inagg_counter_" + Integer.toUnsignedString(typeId));
        }
        final byte[] name = new byte[nameLength];
        key.getBytes(offset + NAME_OFFSET, name);
        if (!isMetricName(name))
        {
            // Not written by write() (a damaged or foreign counters file): never exported as it is.
            return new CounterKey(NONE, NONE, false, "inagg_counter_" + Integer.toUnsignedString(typeId));
        }
        return new CounterKey(key.getInt(offset + JOB_ID_OFFSET), key.getInt(offset + WORKER_ID_OFFSET),
            (key.getShort(offset + FLAGS_OFFSET) & FLAG_GAUGE) != 0, new String(name, StandardCharsets.US_ASCII));
    }

    /** True if {@code name} matches {@code [a-z_][a-z0-9_]*} (without a regular expression: read per sample). */
    private static boolean isMetricName(final byte[] name)
    {
        for (int i = 0; i < name.length; i++)
        {
            final byte c = name[i];
            final boolean letter = (c >= 'a' && c <= 'z') || c == '_';
            if (!letter && (i == 0 || c < '0' || c > '9'))
            {
                return false;
            }
        }
        return name.length > 0;
    }

    /** The job id, or {@link #NONE}. */
    public int jobId()
    {
        return jobId;
    }

    /** The worker id, or {@link #NONE}. */
    public int workerId()
    {
        return workerId;
    }

    public boolean gauge()
    {
        return gauge;
    }

    /** E.g. {@code inagg_switch_received}. */
    public String metricName()
    {
        return metricName;
    }
}
