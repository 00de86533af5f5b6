package org.inagg.services.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;

import org.inagg.agent.CounterRegistry;
import org.inagg.agent.counters.CountersDirectory;
import org.inagg.agent.counters.CountersFile;
import org.inagg.agent.counters.MetricsServer;
import picocli.CommandLine.Option;

/**
 * {@code --counters-dir DIR} and {@code --metrics-port PORT}, shared by {@code switch}, {@code worker}, {@code ps}
 * and {@code local}: the process's counters in a mapped file that {@code inagg stat} reads, and optionally served to
 * Prometheus (docs/observability.md).
 */
public final class CountersOptions
{
    @Option(names = "--counters-dir", paramLabel = "DIR",
        description = "Directory of this process's counters file <role>-<pid>.counters, read by `inagg stat` and "
            + "removed on exit (default: $INAGG_DIR, else /dev/shm/inagg, else <java.io.tmpdir>/inagg).")
    String directory;

    @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "0",
        description = "Serve the counters at http://<--metrics-bind>:PORT/metrics in the Prometheus text format; "
            + "0 for none (default ${DEFAULT-VALUE}).")
    int metricsPort;

    @Option(names = "--metrics-bind", paramLabel = "IP", defaultValue = "127.0.0.1",
        description = "The address --metrics-port listens on (default ${DEFAULT-VALUE}: this host only; 0.0.0.0 for a "
            + "Prometheus on another host: the counters show job ids, peers and rates).")
    String metricsBind;

    private CountersFile file;
    private MetricsServer server;

    /** --counters-dir, or null for the default directory. */
    public String directory()
    {
        return directory;
    }

    /** --metrics-port, 0 for none. */
    public int metricsPort()
    {
        return metricsPort;
    }

    /**
     * This process's counters, in its counters file (or in memory only, saying why, when the file cannot be created),
     * served on --metrics-port when given. Prints where both are.
     *
     * @param role     switch, worker, ps or local.
     * @param name     what the process serves, shown by {@code inagg stat}.
     * @param capacity most counters.
     * @throws UncheckedIOException if --metrics-port cannot be served.
     */
    public CounterRegistry open(final String role, final String name, final int capacity, final PrintWriter out)
    {
        if (metricsPort < 0 || metricsPort > 65535)
        {
            throw new IllegalArgumentException("--metrics-port must be in 0..65535, got " + metricsPort);
        }
        final Path dir = CountersDirectory.resolve(directory);
        CounterRegistry registry;
        try
        {
            file = CountersFile.create(dir, role, name, capacity);
            registry = file.registry();
        }
        catch (final IOException | RuntimeException ex)
        {
            System.err.printf("inagg: counters not in a file (%s: %s); `inagg stat` will not see this process%n",
                dir, ex.getMessage() == null ? ex.toString() : ex.getMessage());
            registry = new CounterRegistry(capacity);
        }
        if (metricsPort > 0)
        {
            try
            {
                // Bounds the JDK server's request time before it starts: an idle scraper holds its one thread no longer.
                org.inagg.services.http.HttpServers.applyLimits();
                server = MetricsServer.start(new InetSocketAddress(metricsBind, metricsPort), registry.reader(),
                    MetricsServer.processLabels(role));
            }
            catch (final IOException ex)
            {
                close();
                throw new UncheckedIOException("--metrics-port " + metricsPort + ": " + ex.getMessage(), ex);
            }
        }
        if (file != null || server != null)
        {
            out.printf("counters: %s%s%n", file == null ? "in memory" : file.path(),
                server == null ? "" : ", Prometheus at http://" + metricsBind + ":" + server.port() + MetricsServer.PATH);
            out.flush();
        }
        return registry;
    }

    /** Stops serving and removes the counters file. */
    public void close()
    {
        if (server != null)
        {
            server.close();
            server = null;
        }
        if (file != null)
        {
            file.close();
            file = null;
        }
    }
}
