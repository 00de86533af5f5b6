package org.inagg.agent;

import java.util.Locale;

/**
 * What a kind of counter is, fixed at build time: its type id (1xx worker, 2xx switch, 3xx ESA switch, 4xx parameter
 * server, 5xx transport, 6xx host agent), its label and the name it is exported under. Implemented by the counter enums ({@code WorkerCounter},
 * {@code SwitchCounter}, ...), as Aeron's {@code SystemCounterDescriptor} describes the driver's counters.
 */
public interface CounterDescriptor
{
    /** The counter's type id in the counters buffer. */
    int typeId();

    /** What it counts, in words. */
    String label();

    /** The enum constant's name, e.g. {@code DROP_STALE}. */
    String name();

    /** The family of the exported name: {@code worker}, {@code switch}, {@code esa_switch}, {@code ps},
     * {@code transport}, {@code host_agent}. */
    String family();

    /** True for a level that goes up and down (a gauge), false for a count that only grows. */
    default boolean gauge()
    {
        return false;
    }

    /**
     * The exported name, {@code inagg_<family>_<name in lower case>}, e.g. {@code inagg_switch_drop_stale}; Prometheus
     * appends {@code _total} to counters.
     */
    default String metricName()
    {
        return "inagg_" + family() + "_" + name().toLowerCase(Locale.ROOT);
    }
}
