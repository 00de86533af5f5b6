package org.inagg.agent.counters;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.inagg.agent.CounterKey;

/**
 * Counters in the Prometheus text exposition format, version 0.0.4: one family per metric name (counters get
 * {@code _total}), a {@code # HELP} line from the counter's label and type id, a {@code # TYPE} line, and one sample
 * per counter with the process's labels ({@code role}, {@code pid}) and, for per-job counters, {@code job} and
 * {@code worker}; counters of one family with the same job and worker (a sharded switch's shards, each counting its
 * own) are one sample, their sum:
 * <pre>
 * # HELP inagg_switch_received_total messages received (type 201)
 * # TYPE inagg_switch_received_total counter
 * inagg_switch_received_total{role="switch",pid="4242"} 1234
 * </pre>
 */
public final class PrometheusText
{
    /** The Content-Type of the format. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private PrometheusText()
    {
    }

    /** The Prometheus name of a sample: the key's metric name, with {@code _total} for counters. */
    public static String familyName(final CounterKey key)
    {
        return key.gauge() ? key.metricName() : key.metricName() + "_total";
    }

    /**
     * Formats {@code snapshot}.
     *
     * @param processLabels labels of every sample, in order (e.g. role and pid).
     */
    public static String format(final CountersSnapshot snapshot, final Map<String, String> processLabels)
    {
        final Map<String, List<CountersSnapshot.Sample>> families = new LinkedHashMap<>();
        for (final CountersSnapshot.Sample sample : snapshot.samples())
        {
            families.computeIfAbsent(familyName(sample.key()), name -> new ArrayList<>()).add(sample);
        }
        final StringBuilder out = new StringBuilder(4096);
        families.forEach((name, samples) ->
        {
            final CountersSnapshot.Sample first = samples.get(0);
            out.append("# HELP ").append(name).append(' ')
                .append(escapeHelp(help(first.label()) + " (type " + first.typeId() + ")")).append('\n');
            out.append("# TYPE ").append(name).append(' ').append(first.key().gauge() ? "gauge" : "counter")
                .append('\n');
            final Map<Long, long[]> sums = new LinkedHashMap<>();
            final Map<Long, CountersSnapshot.Sample> firstOf = new LinkedHashMap<>();
            for (final CountersSnapshot.Sample sample : samples)
            {
                final long labels = (long)sample.key().jobId() << 32 | sample.key().workerId() & 0xFFFF_FFFFL;
                sums.computeIfAbsent(labels, key -> new long[1])[0] += sample.value();
                firstOf.putIfAbsent(labels, sample);
            }
            for (final Map.Entry<Long, CountersSnapshot.Sample> entry : firstOf.entrySet())
            {
                final CountersSnapshot.Sample sample = entry.getValue();
                out.append(name).append('{');
                boolean firstLabel = true;
                for (final Map.Entry<String, String> label : processLabels.entrySet())
                {
                    firstLabel = appendLabel(out, firstLabel, label.getKey(), label.getValue());
                }
                if (sample.key().jobId() != CounterKey.NONE)
                {
                    firstLabel = appendLabel(out, firstLabel, "job", Integer.toString(sample.key().jobId()));
                }
                if (sample.key().workerId() != CounterKey.NONE)
                {
                    appendLabel(out, firstLabel, "worker", Integer.toString(sample.key().workerId()));
                }
                out.append("} ").append(sums.get(entry.getKey())[0]).append('\n');
            }
        });
        return out.toString();
    }

    /** The label without its owner prefix: "switch: dropped: stale round" is helped as "dropped: stale round". */
    static String help(final String label)
    {
        final int colon = label.indexOf(": ");
        return colon < 0 ? label : label.substring(colon + 2);
    }

    private static boolean appendLabel(final StringBuilder out, final boolean first, final String name,
        final String value)
    {
        if (!first)
        {
            out.append(',');
        }
        out.append(name).append("=\"").append(escapeLabelValue(value)).append('"');
        return false;
    }

    static String escapeHelp(final String text)
    {
        return text.replace("\\", "\\\\").replace("\n", "\\n");
    }

    static String escapeLabelValue(final String text)
    {
        return text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
