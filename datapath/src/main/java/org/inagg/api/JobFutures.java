package org.inagg.api;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.inagg.InaggException;

/**
 * Waiting on a job's futures for the blocking calls of {@link AllReduceJob}: the failure a caller sees is the agent's own
 * exception (so {@link org.inagg.PeerTimeoutException} and friends can be caught by type), not the future's wrapper.
 */
final class JobFutures
{
    private JobFutures()
    {
    }

    /** Waits for an operation and rethrows its failure unwrapped. */
    static void await(final CompletableFuture<Void> future)
    {
        try
        {
            future.join();
        }
        catch (final CompletionException | CancellationException ex)
        {
            throw unwrap(ex);
        }
    }

    /** Waits for the join at most {@code timeoutMs}: a join nobody answers means no agent runs this worker. */
    static void join(final CompletableFuture<Void> future, final long timeoutMs)
    {
        try
        {
            future.get(timeoutMs, TimeUnit.MILLISECONDS);
        }
        catch (final ExecutionException ex)
        {
            throw unwrap(ex);
        }
        catch (final TimeoutException ex)
        {
            throw new InaggException("no answer to the join within " + timeoutMs + " ms; is the agent running?", ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new InaggException("interrupted while joining", ex);
        }
    }

    private static RuntimeException unwrap(final Exception ex)
    {
        final Throwable cause = ex.getCause();
        if (cause instanceof InaggException inagg)
        {
            // The agent's own exception, so callers can catch PeerTimeoutException and friends by type.
            return inagg;
        }
        return cause instanceof RuntimeException runtime ? runtime : new InaggException(String.valueOf(cause), cause);
    }
}
