package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A switch backend in memory: what was installed, in order, and whether it answers. */
final class FakeSwitch implements SwitchBackend
{
    final Map<Integer, JobProgram> jobs = new HashMap<>();
    final List<JobProgram> installs = new ArrayList<>();
    final List<Integer> removals = new ArrayList<>();
    boolean down;
    /** Thrown by {@link #dataAddress()} if set: a failure the controller did not foresee. */
    volatile RuntimeException dataAddressFailure;

    @Override
    public String describe()
    {
        return "fake switch";
    }

    @Override
    public InetSocketAddress dataAddress()
    {
        if (dataAddressFailure != null)
        {
            throw dataAddressFailure;
        }
        return new InetSocketAddress("127.0.0.1", 9000);
    }

    @Override
    public synchronized void install(final JobProgram program)
    {
        if (down)
        {
            throw new SwitchUnreachableException("fake switch unreachable", null);
        }
        installs.add(program);
        jobs.put(program.jobId(), program);
    }

    @Override
    public synchronized boolean remove(final int jobId)
    {
        if (down)
        {
            throw new SwitchUnreachableException("fake switch unreachable", null);
        }
        removals.add(jobId);
        return jobs.remove(jobId) != null;
    }

    @Override
    public synchronized Map<Integer, JobProgram> installed()
    {
        if (down)
        {
            throw new SwitchUnreachableException("fake switch unreachable", null);
        }
        return Map.copyOf(jobs);
    }

    @Override
    public void close()
    {
    }
}
