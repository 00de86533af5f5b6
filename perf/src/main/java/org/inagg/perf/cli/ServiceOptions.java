package org.inagg.perf.cli;

import picocli.CommandLine.Option;

/** Options of the long-running nodes ({@code switch}, {@code ps}): how long, how chatty, how lossy, how idle. */
final class ServiceOptions
{
    @Option(names = "--max-peers", defaultValue = "4096", description = "Most peer addresses (default ${DEFAULT-VALUE}).")
    int maxPeers;

    @Option(names = "--duration", defaultValue = "0", description = "Seconds to run; 0 runs until stopped (default ${DEFAULT-VALUE}).")
    long durationSeconds;

    @Option(names = "--stats-interval", defaultValue = "5", description = "Seconds between counter reports; 0 for none (default ${DEFAULT-VALUE}).")
    long statsSeconds;

    @Option(names = "--loss", defaultValue = "0", description = "Fault rate injected on received packets (default ${DEFAULT-VALUE}).")
    double loss;

    @Option(names = "--idle", defaultValue = "backoff", description = "Idle strategy (default ${DEFAULT-VALUE}).")
    String idle;
}
