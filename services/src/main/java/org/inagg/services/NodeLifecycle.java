package org.inagg.services;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.AgentRunner;

/**
 * How a launched node stops: its agent thread first (the agent's close takes its transport down), then what it opened
 * beside it, in order (a control port, a counters file); once, from whichever thread closes first (a shutdown hook or
 * the process's main), and {@link #awaitClose} for the process to block on until then.
 */
public final class NodeLifecycle
{
    private final Runnable stopAgent;
    private final List<Runnable> afterAgent;
    private final CountDownLatch closed = new CountDownLatch(1);

    /** @param afterAgent closed after the agent thread stopped, in this order. */
    public NodeLifecycle(final AgentRunner runner, final Runnable... afterAgent)
    {
        this(runner::close, afterAgent);
    }

    /**
     * For a node whose agent thread is another object's to stop (a worker's {@code AllReduceJob}).
     *
     * @param stopAgent  stops the agent thread (and so its transport).
     * @param afterAgent closed after the agent thread stopped, in this order.
     */
    public NodeLifecycle(final Runnable stopAgent, final Runnable... afterAgent)
    {
        this.stopAgent = stopAgent;
        this.afterAgent = List.of(afterAgent);
    }

    /** Blocks until {@link #close()} has run (from any thread) or the timeout passes; true if closed. */
    public boolean awaitClose(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        return closed.await(timeout, unit);
    }

    /**
     * Stops the agent thread, then closes the rest in order. Once: a later call returns once the first one finished
     * (it waits on this object meanwhile). A step that throws does not skip the later ones, and the node counts as
     * closed either way ({@link #awaitClose} returns); the first failure is rethrown, the later ones suppressed.
     */
    public synchronized void close()
    {
        if (closed.getCount() == 0)
        {
            return;
        }
        RuntimeException failure = null;
        try
        {
            stopAgent.run();
        }
        catch (final RuntimeException ex)
        {
            failure = ex;
        }
        for (final Runnable step : afterAgent)
        {
            try
            {
                step.run();
            }
            catch (final RuntimeException ex)
            {
                if (failure == null)
                {
                    failure = ex;
                }
                else
                {
                    failure.addSuppressed(ex);
                }
            }
        }
        closed.countDown();
        if (failure != null)
        {
            throw failure;
        }
    }
}
