package org.inagg.services.worker;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.agent.CounterRegistry;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.services.NodeLifecycle;
import org.inagg.services.controller.Assignment;
import org.inagg.services.controller.ControllerClient;
import org.inagg.services.worker.WorkerContext.OpenedTransport;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.FaultInjectingTransport;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounters;
import org.inagg.transport.UdpTransport;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.wire.InaggHeader;

/**
 * A running worker: its transport open toward its switch (a UDP socket, or what the context's opener gave), registered
 * with the controller if there is one (which tells it its job, worker id and JOIN credential), and its
 * {@link AllReduceJob} joined, whose agent runs on a thread of its own. {@link #launch} starts one from a
 * {@link WorkerContext}; {@link #close()} stops the agent thread (whose agent closes the transport), leaves the
 * controller (the last rank to leave frees the job) and closes the counters; {@link #awaitClose} blocks until then.
 */
public final class WorkerNode implements AutoCloseable
{
    /** Timeout of each call to the controller. */
    static final Duration CONTROLLER_CALL_TIMEOUT = Duration.ofSeconds(5);

    private final WorkerContext context;
    private final Transport transport;
    private final AllReduceJob job;
    private final NodeLifecycle lifecycle;

    private WorkerNode(final WorkerContext context, final Transport transport, final AllReduceJob job,
        final NodeLifecycle lifecycle)
    {
        this.context = context;
        this.transport = transport;
        this.job = job;
        this.lifecycle = lifecycle;
    }

    /**
     * Checks the context, asks the controller (if any) for the switch, opens the transport, registers this rank's
     * source with the controller, opens the counters and joins the job. On any failure what was opened is closed
     * again.
     *
     * @throws IllegalArgumentException from {@link WorkerContext#conclude()}.
     * @throws InterruptedException     if interrupted while the context's opener waits (DPDK links).
     */
    public static WorkerNode launch(final WorkerContext context) throws InterruptedException
    {
        context.conclude();
        final ControllerClient controller = context.controller() == null ? null
            : new ControllerClient(context.controller(), CONTROLLER_CALL_TIMEOUT);
        boolean countersOpen = false;
        // What the node runs on (the decorator's, e.g. a pcap capture, which closes the transport it wraps): a launch
        // that fails closes that, so a capture is flushed and closed too.
        Transport decorated = null;
        try
        {
            final InetSocketAddress switchAddress = controller != null ? controller.switchAddress()
                : context.switchAddress();
            final OpenedTransport opened = open(context, switchAddress);
            decorated = opened.transport();
            int jobId = context.jobId();
            int workerId = context.workerId();
            long joinCredential = InaggHeader.NO_CREDENTIAL;
            if (controller != null)
            {
                // The transport is open first: its address is the source the switch will admit for this rank (over
                // DPDK, the IPv4 source and UDP port of its frames; the switch pins the MAC of its first accepted
                // JOIN).
                final Assignment assignment = controller.register(context.jobName(), workerId, context.workers(),
                    context.dtype(), context.elements(), opened.source(), 0, context.controllerWait());
                jobId = assignment.jobId();
                workerId = assignment.workerId();
                joinCredential = assignment.joinCredential();
                context.log(String.format("inagg worker: job '%s' is job %d, session %d, on switch %s (controller %s)",
                    assignment.name(), jobId, assignment.session(), switchAddress.getHostString() + ":"
                    + switchAddress.getPort(), controller.url()));
            }
            final CounterRegistry counters = context.openCounters("worker " + workerId + "/" + context.workers()
                + " of job " + jobId + " via " + opened.transport().describePeer(0));
            countersOpen = true;
            opened.transport().countInto(TransportCounters.in(counters, "worker", jobId, workerId));
            // The decorator's transport first (a capture): closed on a failure of the wrap that follows too.
            decorated = context.decorator().apply(opened.transport(), opened.headers());
            decorated = FaultInjectingTransport.wrap(decorated,
                context.loss() > 0 ? FaultConfig.lossy(context.loss(), context.seed() * 31 + workerId)
                    : FaultConfig.NONE);
            final AllReduceJob job = AllReduceJob.open(new JobContext().jobId(jobId).workerId(workerId)
                .workers(context.workers()).joinCredential(joinCredential).transport(decorated)
                .retransmitTimeout(context.retransmitTimeout()).peerTimeout(context.peerTimeout())
                .idleStrategy(context.idle()).counters(counters));
            final Runnable leave = controller == null ? () -> { } : controller::close;
            return new WorkerNode(context, opened.transport(), job,
                new NodeLifecycle(job::close, leave, context::closeCounters));
        }
        catch (final RuntimeException | InterruptedException ex)
        {
            if (decorated != null)
            {
                decorated.close(); // a job that failed to join closed it already: closing again does nothing
            }
            if (countersOpen)
            {
                context.closeCounters();
            }
            if (controller != null)
            {
                controller.close();
            }
            throw ex;
        }
    }

    private static OpenedTransport open(final WorkerContext context, final InetSocketAddress switchAddress)
        throws InterruptedException
    {
        final int maxMessageLength = InaggHeader.messageLength(context.maxLanes());
        if (context.transportOpener() != null)
        {
            return context.transportOpener().open(maxMessageLength);
        }
        final UdpTransport udp = UdpTransport.open(context.bind(), List.of(switchAddress), 1, maxMessageLength, 64);
        return new OpenedTransport(udp, FrameHeaders.udp(udp), new InetSocketAddress(
            ControllerClient.sourceToward(udp.localAddress(), switchAddress), udp.localAddress().getPort()));
    }

    /** The job this worker joined: run its collectives (from one thread at a time). */
    public AllReduceJob job()
    {
        return job;
    }

    /** The job's id: the context's, or the one the controller assigned. */
    public int jobId()
    {
        return job.context().jobId();
    }

    /** This worker's id: the context's, or the one the controller assigned. */
    public int workerId()
    {
        return job.context().workerId();
    }

    public int workers()
    {
        return job.context().workers();
    }

    public WorkerContext context()
    {
        return context;
    }

    /** The switch, as the transport names it. */
    public String describeSwitch()
    {
        return transport.describePeer(0);
    }

    /** On UDP: the socket's I/O mode and buffers. Nothing on a transport the context's opener gave. */
    public List<String> transportNotes()
    {
        return context.transportOpener() == null && transport instanceof UdpTransport udp
            ? List.of(udp.describeIo(), udp.describeBuffers()) : List.of();
    }

    /**
     * On UDP, once joined: what does not fit when the switch's packets exceed the MTU of the interface this worker sends
     * on toward the switch ({@link PacketFit}), for a warning; null when they fit, or over DPDK.
     */
    public String packetFitWarning()
    {
        return context.transportOpener() == null && transport instanceof UdpTransport udp
            ? PacketFit.warning(udp, job.elementsPerPacket()) : null;
    }

    /** Blocks until {@link #close()} has run (from any thread) or the timeout passes; true if closed. */
    public boolean awaitClose(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        return lifecycle.awaitClose(timeout, unit);
    }

    /**
     * Stops the agent thread (its agent closes the transport), leaves the controller and closes the counters. Once; a
     * second call, from any thread, returns at once.
     */
    @Override
    public void close()
    {
        lifecycle.close();
    }
}
