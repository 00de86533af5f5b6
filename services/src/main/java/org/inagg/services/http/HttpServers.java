package org.inagg.services.http;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpServer;

/**
 * The JDK HTTP servers of the services (controller, switch control, metrics), bounded: a fixed pool of threads with a
 * bounded queue (a request beyond both is refused by closing its connection, never queued without end), and time
 * limits on requests, so that connections that send a partial request and then nothing hold a thread for
 * {@value #MAX_REQUEST_SECONDS_DEFAULT} s at most, not forever.
 * <p>
 * The JDK reads its limits from system properties once, when the first server of the process starts:
 * {@link #applyLimits()} sets those not given on the command line, and every server here is created after it.
 * <table>
 *   <caption>Limits</caption>
 *   <tr><th>property</th><th>default here</th><th>bounds</th></tr>
 *   <tr><td>{@value #MAX_REQUEST_PROP_NAME}</td><td>{@value #MAX_REQUEST_SECONDS_DEFAULT} s</td><td>from a request's
 *   first byte (or a connection's accept) to its last</td></tr>
 *   <tr><td>{@value #MAX_RESPONSE_PROP_NAME}</td><td>{@value #MAX_RESPONSE_SECONDS_DEFAULT} s</td><td>from the end of
 *   the request to the end of the answer (a plan takes seconds)</td></tr>
 *   <tr><td>{@value #MAX_CONNECTIONS_PROP_NAME}</td><td>{@value #MAX_CONNECTIONS_DEFAULT}</td><td>open connections per
 *   server; more wait in the listen backlog</td></tr>
 * </table>
 */
public final class HttpServers
{
    public static final String MAX_REQUEST_PROP_NAME = "sun.net.httpserver.maxReqTime";
    public static final long MAX_REQUEST_SECONDS_DEFAULT = 5;
    public static final String MAX_RESPONSE_PROP_NAME = "sun.net.httpserver.maxRspTime";
    public static final long MAX_RESPONSE_SECONDS_DEFAULT = 120;
    public static final String MAX_CONNECTIONS_PROP_NAME = "jdk.httpserver.maxConnections";
    public static final int MAX_CONNECTIONS_DEFAULT = 512;

    private HttpServers()
    {
    }

    /** Sets the JDK server's limits that were not given as system properties; before any server of the process. */
    public static synchronized void applyLimits()
    {
        setIfAbsent(MAX_REQUEST_PROP_NAME, MAX_REQUEST_SECONDS_DEFAULT);
        setIfAbsent(MAX_RESPONSE_PROP_NAME, MAX_RESPONSE_SECONDS_DEFAULT);
        setIfAbsent(MAX_CONNECTIONS_PROP_NAME, MAX_CONNECTIONS_DEFAULT);
    }

    /**
     * A server on {@code bind} served by {@code threads} daemon threads named {@code name} and a queue of {@code queue}
     * requests; not started.
     *
     * @return the server, its executor set ({@link #executor(HttpServer)} to shut it down).
     */
    public static HttpServer create(final InetSocketAddress bind, final int threads, final int queue,
        final String name) throws IOException
    {
        applyLimits();
        final HttpServer server = HttpServer.create(bind, 64);
        final ThreadPoolExecutor executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(queue), runnable ->
            {
                final Thread thread = new Thread(runnable, name);
                thread.setDaemon(true);
                return thread;
            }, new ThreadPoolExecutor.AbortPolicy()); // the JDK's dispatcher closes a refused connection
        executor.allowCoreThreadTimeOut(true);
        server.setExecutor(executor);
        return server;
    }

    /** Stops {@code server} and its threads. */
    public static void stop(final HttpServer server)
    {
        server.stop(0);
        if (server.getExecutor() instanceof ThreadPoolExecutor executor)
        {
            executor.shutdownNow();
        }
    }

    private static void setIfAbsent(final String name, final long value)
    {
        if (System.getProperty(name) == null)
        {
            System.setProperty(name, Long.toString(value));
        }
    }
}
