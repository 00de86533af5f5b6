package org.inagg.services.controller;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.inagg.p4.bmv2.Bmv2Switch;
import org.inagg.p4.control.InaggP4;
import org.inagg.p4.control.JobSpec;
import org.inagg.p4.control.WorkerEndpoint;
import org.inagg.wire.InaggHeader;

/**
 * bmv2 ({@code simple_switch} running {@code inagg_v1model.p4}) through {@link Bmv2Switch}: each job becomes a
 * {@link JobSpec} whose {@link WorkerEndpoint}s carry the ranks' registered IPv4 source and UDP port (the program's
 * {@code worker_source} admission) and the switch port and MAC behind which that host lives, from {@link #hosts}; the
 * job's multicast group is its job id. A new session with the same sources goes through
 * {@link Bmv2Switch#startSession} (rows out, slot registers cleared, rows in); other changes remove and add the job.
 * Thread-safe: the controller calls it for several jobs at once, outside its lock; one call at a time goes to bmv2.
 */
public final class Bmv2Backend implements SwitchBackend
{
    /** Where a worker host is attached: the bmv2 port its results leave by and its MAC. */
    public record Host(int port, long mac)
    {
    }

    private final Bmv2Switch bmv2;
    private final InetSocketAddress dataAddress;
    private final Map<InetAddress, Host> hosts;

    /**
     * @param bmv2        the running switch, taken over.
     * @param dataAddress where workers send (the switch's IPv4 address and the inagg UDP port).
     * @param hosts       the switch port and MAC of every worker host the controller may admit.
     */
    public Bmv2Backend(final Bmv2Switch bmv2, final InetSocketAddress dataAddress, final Map<InetAddress, Host> hosts)
    {
        this.bmv2 = bmv2;
        this.dataAddress = dataAddress;
        this.hosts = Map.copyOf(hosts);
    }

    /** The v1model program's packets: its registers hold {@value InaggP4#V1MODEL_MAX_LANES} lanes a slot. */
    @Override
    public Lanes defaultLanes()
    {
        return new Lanes(InaggP4.V1MODEL_MAX_LANES, "the v1model program's packets");
    }

    @Override
    public String describe()
    {
        return "bmv2 (thrift port " + bmv2.cli().thriftPort() + ") at " + dataAddress.getAddress().getHostAddress()
            + ":" + dataAddress.getPort();
    }

    @Override
    public InetSocketAddress dataAddress()
    {
        return dataAddress;
    }

    /** The job as {@link Bmv2Switch} takes it. */
    JobSpec spec(final JobProgram program)
    {
        final List<WorkerEndpoint> workers = new ArrayList<>();
        for (int worker = 0; worker < program.workers(); worker++)
        {
            final InetSocketAddress source = program.sources().get(worker);
            final Host host = hosts.get(source.getAddress());
            if (host == null)
            {
                throw new IllegalStateException("job " + program.jobId() + ": worker " + worker + "'s host "
                    + source.getAddress().getHostAddress() + " is not attached to " + describe()
                    + " (no --bmv2-host entry for it)");
            }
            final long[] credentials = program.joinCredentials();
            workers.add(new WorkerEndpoint(worker, host.port(), host.mac(),
                WorkerEndpoint.parseIpv4(source.getAddress().getHostAddress()), source.getPort(),
                credentials == null ? InaggHeader.NO_CREDENTIAL : credentials[worker]));
        }
        return new JobSpec(program.jobId(), program.slots(), program.slotBase(), program.lanes(), program.jobId(),
            workers, null, program.session());
    }

    @Override
    public synchronized void install(final JobProgram program)
    {
        final JobSpec next = spec(program);
        final JobSpec current = bmv2.jobs().stream().filter(j -> j.jobId() == program.jobId()).findFirst()
            .orElse(null);
        if (current != null && current.withSession(next.session()).equals(next))
        {
            bmv2.startSession(program.jobId(), program.session());
            return;
        }
        if (current != null)
        {
            bmv2.removeJob(program.jobId());
        }
        bmv2.addJob(next);
    }

    @Override
    public synchronized boolean remove(final int jobId)
    {
        if (bmv2.jobs().stream().noneMatch(j -> j.jobId() == jobId))
        {
            return false;
        }
        bmv2.removeJob(jobId);
        return true;
    }

    @Override
    public synchronized Map<Integer, JobProgram> installed()
    {
        final Map<Integer, JobProgram> jobs = new HashMap<>();
        for (final JobSpec job : bmv2.jobs())
        {
            final List<InetSocketAddress> sources = new ArrayList<>();
            for (final WorkerEndpoint worker : job.workers())
            {
                sources.add(new InetSocketAddress(ipv4(worker.ipv4()), worker.udpPort()));
            }
            jobs.put(job.jobId(), new JobProgram(job.jobId(), job.slots(), job.slotBase(), job.lanes(), job.session(),
                sources));
        }
        return jobs;
    }

    @Override
    public void close()
    {
        // The switch and its CLI belong to the caller.
    }

    private static InetAddress ipv4(final int address)
    {
        try
        {
            return InetAddress.getByAddress(new byte[] {(byte)(address >>> 24), (byte)(address >>> 16),
                (byte)(address >>> 8), (byte)address});
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
