package org.inagg.services.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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

    @Option(names = "--idle", defaultValue = org.inagg.transport.IdleStrategies.SERVICE_DEFAULT, description = "Idle "
        + "strategy: " + org.inagg.transport.IdleStrategies.NAMES + "; block:N waits in the kernel for a packet, up to N ns"
        + " when idle; spin is busy polling, for dedicated cores (default ${DEFAULT-VALUE}).")
    String idle;

    /** @throws IllegalArgumentException naming the first option out of its range. */
    void validate()
    {
        CliNumbers.require("--max-peers", maxPeers, 1, Integer.MAX_VALUE);
        CliNumbers.require("--duration", durationSeconds, 0, Long.MAX_VALUE);
        CliNumbers.require("--stats-interval", statsSeconds, 0, Long.MAX_VALUE);
        CliNumbers.requireLoss(loss);
    }

    /** What a command waits on: true once its node has stopped (a shutdown hook closed it). */
    @FunctionalInterface
    interface Stopped
    {
        boolean await(long timeout, TimeUnit unit) throws InterruptedException;
    }

    /** Returns once {@code stopped} counts down or --duration elapses, running {@code report} every --stats-interval. */
    void runUntilStopped(final CountDownLatch stopped, final Runnable report) throws InterruptedException
    {
        runUntilStopped(stopped::await, report);
    }

    /** Returns once {@code stopped} says so or --duration elapses, running {@code report} every --stats-interval. */
    void runUntilStopped(final Stopped stopped, final Runnable report) throws InterruptedException
    {
        final long end = durationSeconds > 0 ? System.nanoTime() + TimeUnit.SECONDS.toNanos(durationSeconds)
            : Long.MAX_VALUE;
        final long interval = statsSeconds > 0 ? TimeUnit.SECONDS.toMillis(statsSeconds) : 1000;
        while (System.nanoTime() - end < 0 && !stopped.await(interval, TimeUnit.MILLISECONDS))
        {
            if (statsSeconds > 0)
            {
                report.run();
            }
        }
    }
}
