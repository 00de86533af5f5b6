package org.inagg.services.agent;

import org.inagg.agent.CounterDescriptor;

/** Counters of the per-host agent: fixed type ids (6xx); all count up except the gauges. */
public enum HostAgentCounter implements CounterDescriptor
{
    JOBS_STARTED(601, "jobs started"),
    JOBS_FAILED(602, "jobs failed (a rank left mid-collective, a protocol error, the switch stage)"),
    RANKS_CONNECTED(603, "ranks connected", true),
    ROUNDS(604, "rounds all-reduced"),
    BYTES_REDUCED(605, "bytes of result written"),
    ROUND_ERRORS(606, "rounds refused (sizes or types differ between ranks, NaN or infinity)"),
    HELLOS_REFUSED(607, "ranks refused at hello (version, job, world size)"),
    NETWORK_ROUNDS(608, "rounds all-reduced through the switch"),
    JOBS_ACTIVE(609, "jobs active", true),
    PEERS_REFUSED(610, "connections refused: another local user (SO_PEERCRED), not the agent's nor --allow-group");

    private final int typeId;
    private final String label;
    private final boolean gauge;

    HostAgentCounter(final int typeId, final String label)
    {
        this(typeId, label, false);
    }

    HostAgentCounter(final int typeId, final String label, final boolean gauge)
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
    public boolean gauge()
    {
        return gauge;
    }

    @Override
    public String family()
    {
        return "host_agent";
    }
}
