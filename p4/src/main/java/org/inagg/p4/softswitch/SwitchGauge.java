package org.inagg.p4.softswitch;

import org.inagg.agent.CounterDescriptor;

/**
 * Levels and lifecycle counts of the software switch (type ids 25x), next to its per-packet {@link SwitchCounter}s:
 * what {@code bin/inagg stat} and the Prometheus endpoint show about jobs and sessions. Not part of the P4 programs'
 * counters (the control plane knows its jobs), so the conformance vectors do not state them.
 */
public enum SwitchGauge implements CounterDescriptor
{
    JOBS(251, "jobs installed", true),
    SLOTS(253, "aggregator slots held by installed jobs", true),
    SESSIONS_STARTED(252, "sessions started (job restarts: a rejoining worker, or the control plane)", false);

    private final int typeId;
    private final String label;
    private final boolean gauge;

    SwitchGauge(final int typeId, final String label, final boolean gauge)
    {
        this.typeId = typeId;
        this.label = label;
        this.gauge = gauge;
    }

    @Override
    public int typeId()
    {
        return typeId;
    }

    @Override
    public String label()
    {
        return label;
    }

    @Override
    public String family()
    {
        return "switch";
    }

    @Override
    public boolean gauge()
    {
        return gauge;
    }
}
