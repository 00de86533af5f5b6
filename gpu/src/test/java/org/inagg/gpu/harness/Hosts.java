package org.inagg.gpu.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntConsumer;

/** Runs one action per host concurrently (as H processes would) and rethrows the first failure. */
public final class Hosts implements AutoCloseable
{
    private final ExecutorService executor;
    private final int hosts;

    public Hosts(final int hosts)
    {
        this.hosts = hosts;
        this.executor = Executors.newFixedThreadPool(hosts, r ->
        {
            final Thread t = new Thread(r, "host");
            t.setDaemon(true);
            return t;
        });
    }

    public void run(final IntConsumer perHost)
    {
        final List<Future<?>> futures = new ArrayList<>();
        for (int h = 0; h < hosts; h++)
        {
            final int host = h;
            futures.add(executor.submit(() -> perHost.accept(host)));
        }
        RuntimeException failure = null;
        for (final Future<?> future : futures)
        {
            try
            {
                future.get(60, java.util.concurrent.TimeUnit.SECONDS);
            }
            catch (final java.util.concurrent.ExecutionException ex)
            {
                final Throwable cause = ex.getCause();
                if (failure == null)
                {
                    failure = cause instanceof RuntimeException r ? r : new RuntimeException(cause);
                }
                else
                {
                    failure.addSuppressed(cause);
                }
            }
            catch (final Exception ex)
            {
                if (failure == null)
                {
                    failure = new RuntimeException(ex);
                }
                else
                {
                    failure.addSuppressed(ex);
                }
            }
        }
        if (failure != null)
        {
            throw failure;
        }
    }

    @Override
    public void close()
    {
        executor.shutdownNow();
    }
}
