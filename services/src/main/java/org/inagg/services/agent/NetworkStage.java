package org.inagg.services.agent;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.inagg.api.AllReduceJob;
import org.inagg.api.ElementType;
import org.inagg.api.JobContext;
import org.inagg.api.ReduceOp;
import org.inagg.services.controller.Assignment;
import org.inagg.services.controller.ControllerClient;
import org.inagg.services.worker.PacketFit;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;

/**
 * The host's stream through the switch for a job that spans several hosts: the host's in-host sum goes out as one
 * worker of a switch job and comes back as the sum over all hosts (fixed point, see
 * {@link org.inagg.fixedpoint.FixedPoint} for the bound; int32 exact). Which switch job and worker:
 * <ul>
 *   <li>with a controller ({@link HostAgentContext#controller()}), the agent registers as worker {@code hostIndex} of
 *   {@code hosts} of the job named by the job key (docs/controller.md), which gives the switch, the job id and the
 *   worker id, programs the switch once every host's agent registered, and frees the job when they all leave;</li>
 *   <li>without one, worker {@code hostIndex} of switch job {@code switchJob} (the ranks' {@code INAGG_SWITCH_JOB}) on
 *   {@link HostAgentContext#switchAddress()}, installed there by hand ({@code inagg switch --job ID:HOSTS}).</li>
 * </ul>
 * The job is opened on a thread of its own, since registering and joining wait for the other hosts, and every round
 * is chained after it.
 */
final class NetworkStage implements RoundPipeline.SwitchStage, AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(NetworkStage.class.getName());
    /** What the controller accepts as a job name. */
    private static final int MAX_NAME = 128;

    private final CompletableFuture<AllReduceJob> job;
    private volatile ControllerClient controller;
    private volatile boolean closed;
    /** Reduce-scatter landing buffer (the agent's thread creates it; one round at a time uses it). */
    private MemorySegment scratch;

    NetworkStage(final HostAgentContext context, final Hello hello)
    {
        job = CompletableFuture.supplyAsync(() -> open(context, hello), task -> Thread.ofPlatform().daemon()
            .name("inagg-agent-join-" + hello.hostIndex()).start(task));
    }

    private AllReduceJob open(final HostAgentContext context, final Hello hello)
    {
        // The worker's default idle strategy: it waits in the kernel for the next packet. A backoff that parks up to 1 ms
        // idled the hosts of a reduce-scatter or all-gather between results (2-3x its time on 100 Mbit/s links).
        final JobContext job = new JobContext().workers(hello.hosts()).peerTimeout(context.peerTimeout());
        if (context.retransmitTimeout() != null)
        {
            job.retransmitTimeout(context.retransmitTimeout());
        }
        if (context.controller() == null)
        {
            final UdpTransport transport = udp(context.bindAddress(), context.switchAddress(), context.maxLanes());
            final AllReduceJob joined;
            try
            {
                joined = AllReduceJob.open(job.jobId(hello.switchJob()).workerId(hello.hostIndex())
                    .transport(transport));
            }
            catch (final RuntimeException ex)
            {
                transport.close(); // a job that failed to join closed it already: closing again does nothing
                throw ex;
            }
            return checkedFit(joined, transport, hello);
        }
        // The job's secret comes from its key, which rank 0 drew at random and shared through torch's store: every host
        // of the job derives the same one, and the controller's job name (a hash of the key) does not reveal it.
        final ControllerClient client = new ControllerClient(context.controller(), Duration.ofSeconds(5),
            org.inagg.services.http.ApiToken.fromEnvironment(System.getenv()), jobSecret(hello.jobKey()));
        controller = client;
        UdpTransport transport = null;
        try
        {
            final InetSocketAddress switchAddress = client.switchAddress();
            transport = udp(context.bindAddress(), switchAddress, context.maxLanes());
            // The socket is bound first: its address is the source the switch will admit for this host.
            final Assignment assignment = client.register(jobName(hello.jobKey()), hello.hostIndex(), hello.hosts(),
                "float32", context.slotBytes() / 4, new InetSocketAddress(ControllerClient.sourceToward(
                    transport.localAddress(), switchAddress), transport.localAddress().getPort()), 0,
                context.controllerWait());
            if (closed)
            {
                throw new IllegalStateException("job " + hello.jobKey() + " ended while registering");
            }
            LOG.log(Level.INFO, "job {0}: host {1} of {2} is worker {3} of switch job {4} (''{5}'', session {6}) on "
                + "{7}, from the controller {8}", hello.jobKey(), hello.hostIndex(), hello.hosts(),
                assignment.workerId(), assignment.jobId(), assignment.name(), assignment.session(), switchAddress,
                client.url());
            return checkedFit(AllReduceJob.open(job.jobId(assignment.jobId()).workerId(assignment.workerId())
                .joinCredential(assignment.joinCredential()).transport(transport)), transport, hello);
        }
        catch (final RuntimeException ex)
        {
            if (transport != null)
            {
                transport.close();
            }
            client.close();
            throw ex;
        }
    }

    /** {@code joined}, after a warning in the log if its packets exceed this host's MTU toward the switch. */
    private static AllReduceJob checkedFit(final AllReduceJob joined, final UdpTransport transport, final Hello hello)
    {
        final String warning = PacketFit.warning(transport, joined.elementsPerPacket());
        if (warning != null)
        {
            LOG.log(Level.WARNING, "job {0}: host {1}: {2}", hello.jobKey(), hello.hostIndex(), warning);
        }
        return joined;
    }

    /** The host's socket toward the switch, its datagrams up to {@code maxLanes} lanes (a larger job is refused). */
    private static UdpTransport udp(final InetSocketAddress bind, final InetSocketAddress switchAddress,
        final int maxLanes)
    {
        return UdpTransport.open(bind, List.of(switchAddress), 1,
            InaggHeader.messageLength(maxLanes), 64);
    }

    /**
     * The job key as a controller job name: 1..128 of [A-Za-z0-9._:@-], the key's run id (before its last '-') and a
     * hash of the whole key; never the key's random end, from which {@link #jobSecret} is derived.
     */
    static String jobName(final String jobKey)
    {
        final int dash = jobKey.lastIndexOf('-');
        final String run = dash > 0 ? jobKey.substring(0, dash).replaceAll("[^A-Za-z0-9._:@-]", "_") : "job";
        final String hash = sha256("inagg job name\0" + jobKey).substring(0, 16);
        return (run.length() <= MAX_NAME - 17 ? run : run.substring(run.length() - (MAX_NAME - 17))) + "-" + hash;
    }

    /** The job's secret for the controller, derived from the key (64 hex characters). */
    static String jobSecret(final String jobKey)
    {
        return sha256("inagg job secret\0" + jobKey);
    }

    private static String sha256(final String text)
    {
        try
        {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        catch (final java.security.NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
    }

    /**
     * The round's switch stage, in place in {@code data}: an all-reduce (SUM for SUM and AVG, MIN, MAX) of the host's
     * in-host result; with parts ({@link CollectiveRequest#partElements()}), a REDUCE_SCATTER that brings back only
     * this host's ranks' parts (at their offsets; the others' are left as they were) or an ALL_GATHER that sends only
     * this host's parts and receives the others'. A GATHER round without parts is an int32 sum of the hosts' results,
     * each its own bytes and zeros elsewhere.
     *
     * @param ranksPerHost consecutive ranks per host (the owner of rank {@code r}'s part is host {@code r / ranksPerHost}).
     */
    CompletableFuture<Void> stage(final MemorySegment data, final CollectiveRequest round, final int ranksPerHost)
    {
        return stage(data, 0, round, ranksPerHost);
    }

    /**
     * The switch stage of one chunk of a round ({@link RoundPipeline}): {@code round} describes the chunk (its count,
     * parts and first part's rank), which starts {@code at} elements into {@code data}. Chunks queue in the job in the
     * order they are staged and complete in that order; each has its own range of the landing buffer, so several may
     * be in flight.
     */
    @Override
    public CompletableFuture<Void> stage(final MemorySegment data, final long at, final CollectiveRequest round,
        final int ranksPerHost)
    {
        final long from = at * AgentProtocol.elementBytes(round.dtype());
        final MemorySegment r = data.asSlice(from, round.count() * AgentProtocol.elementBytes(round.dtype()));
        final ElementType type = round.dtype() == AgentProtocol.DTYPE_FLOAT32 ? ElementType.FLOAT32 : ElementType.INT32;
        if (round.op() == AgentProtocol.OP_GATHER)
        {
            if (round.partElements() == 0)
            {
                return job.thenCompose(j -> j.allReduceAsync(r, r, ElementType.INT32));
            }
            final int[] owners = owners(round, ranksPerHost);
            return job.thenCompose(j -> j.allGatherAsync(r, ElementType.INT32, round.partElements(), owners));
        }
        final ReduceOp op = switch (round.op())
        {
            case AgentProtocol.OP_MIN -> ReduceOp.MIN;
            case AgentProtocol.OP_MAX -> ReduceOp.MAX;
            default -> ReduceOp.SUM;
        };
        if (round.partElements() == 0)
        {
            return job.thenCompose(j -> j.allReduceAsync(r, r, type, op));
        }
        final int[] owners = owners(round, ranksPerHost);
        final long partBytes = round.partElements() * AgentProtocol.elementBytes(round.dtype());
        final MemorySegment scratch = scratch(from + r.byteSize()).asSlice(from, r.byteSize());
        return job.thenCompose(j ->
        {
            final int host = j.context().workerId();
            final long owned = java.util.Arrays.stream(owners).filter(o -> o == host).count();
            final MemorySegment mine = scratch.asSlice(0, owned * partBytes);
            return j.reduceScatterAsync(r, mine, type, op, round.partElements(), owners).thenRun(() ->
            {
                // The owned parts come back one after another; each goes to its place in the round.
                long k = 0;
                for (int p = 0; p < owners.length; p++)
                {
                    if (owners[p] == host)
                    {
                        MemorySegment.copy(mine, k++ * partBytes, r, p * partBytes, partBytes);
                    }
                }
            });
        });
    }

    /**
     * Lanes per packet of the switch job (every block of a float sum is one packet's lanes), 0 while the job is still
     * being joined.
     */
    @Override
    public int lanes()
    {
        return job.isDone() && !job.isCompletedExceptionally() ? job.join().elementsPerPacket() : 0;
    }

    @Override
    public CompletableFuture<?> joined()
    {
        return job;
    }

    private static int[] owners(final CollectiveRequest round, final int ranksPerHost)
    {
        final int[] owners = new int[(int)round.parts()];
        for (int p = 0; p < owners.length; p++)
        {
            owners[p] = (round.partRank() + p) / ranksPerHost;
        }
        return owners;
    }

    /**
     * Where a reduce-scatter's owned parts land first: one buffer, grown to the largest round seen (a chunk still in
     * flight keeps the buffer it was given).
     */
    private MemorySegment scratch(final long bytes)
    {
        if (scratch == null || scratch.byteSize() < bytes)
        {
            scratch = java.lang.foreign.Arena.ofAuto().allocate(bytes, 64);
        }
        return scratch;
    }

    @Override
    public void close()
    {
        closed = true;
        job.thenAccept(AllReduceJob::close);
        job.cancel(false);
        final ControllerClient client = controller;
        if (client != null)
        {
            // After the job's close: the registration goes last, and the last host's DELETE frees the switch job.
            client.close();
        }
    }
}
