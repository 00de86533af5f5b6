package org.inagg.agent.counters;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.agrona.concurrent.status.CountersReader;

/**
 * {@code GET /metrics}: the process's counters in the Prometheus text format ({@link PrometheusText}), served by the
 * JDK's HTTP server on one daemon thread. Each scrape reads the counters as they are (no lock, nothing for the agents
 * to do); any other path answers 404, any other method 405.
 */
public final class MetricsServer implements AutoCloseable
{
    public static final String PATH = "/metrics";

    private final HttpServer server;
    private final ExecutorService executor;
    private final CountersReader counters;
    private final Map<String, String> labels;

    private MetricsServer(final HttpServer server, final ExecutorService executor, final CountersReader counters,
        final Map<String, String> labels)
    {
        this.server = server;
        this.executor = executor;
        this.counters = counters;
        this.labels = labels;
    }

    /**
     * Starts serving {@code counters} at {@code address} (port 0: any free port, see {@link #port()}).
     *
     * @param labels labels of every sample, e.g. {@code role} and {@code pid} (in this order).
     */
    public static MetricsServer start(final InetSocketAddress address, final CountersReader counters,
        final Map<String, String> labels) throws IOException
    {
        final HttpServer server = HttpServer.create(address, 16);
        final ExecutorService executor = Executors.newSingleThreadExecutor(runnable ->
        {
            final Thread thread = new Thread(runnable, "inagg-metrics");
            thread.setDaemon(true);
            return thread;
        });
        final MetricsServer metrics = new MetricsServer(server, executor, counters, new LinkedHashMap<>(labels));
        server.createContext("/", metrics::handle);
        server.setExecutor(executor);
        server.start();
        return metrics;
    }

    /** The labels {@code role} and {@code pid} of this process. */
    public static Map<String, String> processLabels(final String role)
    {
        final Map<String, String> labels = new LinkedHashMap<>();
        labels.put("role", role);
        labels.put("pid", Long.toString(ProcessHandle.current().pid()));
        return labels;
    }

    /** The port it listens on. */
    public int port()
    {
        return server.getAddress().getPort();
    }

    private void handle(final HttpExchange exchange) throws IOException
    {
        try (exchange)
        {
            final String method = exchange.getRequestMethod();
            if (!PATH.equals(exchange.getRequestURI().getPath()))
            {
                respond(exchange, 404, "text/plain; charset=utf-8", "not found; the counters are at " + PATH + "\n",
                    true);
            }
            else if (!"GET".equals(method) && !"HEAD".equals(method))
            {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                respond(exchange, 405, "text/plain; charset=utf-8", "use GET\n", true);
            }
            else
            {
                respond(exchange, 200, PrometheusText.CONTENT_TYPE,
                    PrometheusText.format(CountersSnapshot.take(counters), labels), "GET".equals(method));
            }
        }
    }

    private static void respond(final HttpExchange exchange, final int status, final String contentType,
        final String body, final boolean withBody) throws IOException
    {
        final byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, withBody ? bytes.length : -1);
        if (withBody)
        {
            try (OutputStream out = exchange.getResponseBody())
            {
                out.write(bytes);
            }
        }
    }

    /** Stops listening. */
    @Override
    public void close()
    {
        server.stop(0);
        executor.shutdownNow();
    }
}
