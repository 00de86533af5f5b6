package org.inagg.services.agent;

import org.agrona.concurrent.status.AtomicCounter;

/** The agent's counters, resolved once. */
final class HostAgentCounters
{
    final AtomicCounter jobsStarted;
    final AtomicCounter jobsFailed;
    final AtomicCounter ranksConnected;
    final AtomicCounter rounds;
    final AtomicCounter bytesReduced;
    final AtomicCounter roundErrors;
    final AtomicCounter hellosRefused;
    final AtomicCounter networkRounds;
    final AtomicCounter jobsActive;
    final AtomicCounter peersRefused;

    HostAgentCounters(final org.inagg.agent.CounterRegistry registry, final String name)
    {
        jobsStarted = registry.newCounter(HostAgentCounter.JOBS_STARTED, label(name, HostAgentCounter.JOBS_STARTED));
        jobsFailed = registry.newCounter(HostAgentCounter.JOBS_FAILED, label(name, HostAgentCounter.JOBS_FAILED));
        ranksConnected = registry.newCounter(HostAgentCounter.RANKS_CONNECTED,
            label(name, HostAgentCounter.RANKS_CONNECTED));
        rounds = registry.newCounter(HostAgentCounter.ROUNDS, label(name, HostAgentCounter.ROUNDS));
        bytesReduced = registry.newCounter(HostAgentCounter.BYTES_REDUCED,
            label(name, HostAgentCounter.BYTES_REDUCED));
        roundErrors = registry.newCounter(HostAgentCounter.ROUND_ERRORS, label(name, HostAgentCounter.ROUND_ERRORS));
        hellosRefused = registry.newCounter(HostAgentCounter.HELLOS_REFUSED,
            label(name, HostAgentCounter.HELLOS_REFUSED));
        networkRounds = registry.newCounter(HostAgentCounter.NETWORK_ROUNDS,
            label(name, HostAgentCounter.NETWORK_ROUNDS));
        jobsActive = registry.newCounter(HostAgentCounter.JOBS_ACTIVE, label(name, HostAgentCounter.JOBS_ACTIVE));
        peersRefused = registry.newCounter(HostAgentCounter.PEERS_REFUSED,
            label(name, HostAgentCounter.PEERS_REFUSED));
    }

    private static String label(final String name, final HostAgentCounter counter)
    {
        return "agent " + name + ": " + counter.label();
    }
}
