package org.inagg.perf.cluster;

import org.agrona.concurrent.Agent;

/** An agent that can be frozen from another thread, to play a participant whose process died. */
final class KillableAgent implements Agent
{
    private final Agent delegate;
    private volatile boolean killed;

    KillableAgent(final Agent delegate)
    {
        this.delegate = delegate;
    }

    void kill()
    {
        killed = true;
    }

    @Override
    public void onStart()
    {
        delegate.onStart();
    }

    @Override
    public int doWork() throws Exception
    {
        return killed ? 0 : delegate.doWork();
    }

    @Override
    public void onClose()
    {
        delegate.onClose();
    }

    @Override
    public String roleName()
    {
        return delegate.roleName();
    }
}
