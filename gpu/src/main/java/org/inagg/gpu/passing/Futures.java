package org.inagg.gpu.passing;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.inagg.InaggException;

/** Waits on the datapath's futures and rethrows its own exceptions (e.g. PeerTimeoutException) unwrapped. */
final class Futures
{
    private Futures()
    {
    }

    static void join(final CompletableFuture<?> future)
    {
        try
        {
            future.join();
        }
        catch (final CompletionException | CancellationException ex)
        {
            final Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new InaggException(String.valueOf(cause), cause);
        }
    }
}
