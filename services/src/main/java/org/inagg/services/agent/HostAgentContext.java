package org.inagg.services.agent;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.inagg.agent.CounterRegistry;

/**
 * Settings of a per-host agent, Aeron style: fluent setters, then {@link #conclude()} fills defaults and validates once.
 * Each option with a default also reads a system property ({@code *_PROP_NAME}).
 */
public final class HostAgentContext
{
    public static final String NAME_PROP_NAME = "inagg.agent.name";
    public static final String NAME_DEFAULT = "inagg";
    public static final String DIRECTORY_PROP_NAME = "inagg.agent.dir";
    /** The private directory's parent: {@code /dev/shm/inagg-<uid>} (else {@code <java.io.tmpdir>/inagg-<uid>}). */
    public static final String DIRECTORY_PARENT_DEFAULT = "/dev/shm";
    public static final String ALLOW_GROUP_PROP_NAME = "inagg.agent.allow.group";
    public static final String SLOT_BYTES_PROP_NAME = "inagg.agent.slot.bytes";
    /** 32 MiB: 8 M float32 per rank and round; larger tensors go in several rounds. */
    public static final long SLOT_BYTES_DEFAULT = 32L << 20;
    public static final String REDUCER_THREADS_PROP_NAME = "inagg.agent.reducer.threads";
    public static final String CHUNK_BYTES_PROP_NAME = "inagg.agent.chunk.bytes";
    /**
     * 1 MiB: a 4 MiB round is 4 chunks (docs/performance.md, "Chunked rounds"); the chunks of a job whose host has more
     * cores than the job's local ranks, when neither {@link #chunkBytes(long)} nor the property says otherwise.
     */
    public static final long CHUNK_BYTES_DEFAULT = 1L << 20;
    /** Not set: {@link #CHUNK_BYTES_DEFAULT} where a job's local ranks leave the host a core to sum on, else 0. */
    public static final long CHUNK_BYTES_AUTO = -1;
    public static final String NETWORK_CHUNK_BYTES_PROP_NAME = "inagg.agent.network.chunk.bytes";
    /**
     * 0: a round goes through the switch as one operation once summed. The switch job runs operations one after
     * another, each draining the links before the next starts: 1 MiB chunks made a 4 MiB reduce-scatter on 100 Mbit/s
     * links slower, not faster (docs/performance.md, "Chunked rounds").
     */
    public static final long NETWORK_CHUNK_BYTES_DEFAULT = 0;
    public static final String IDLE_EXIT_PROP_NAME = "inagg.agent.idle.exit.ms";
    public static final String PEER_TIMEOUT_PROP_NAME = "inagg.agent.peer.timeout.ms";
    public static final long PEER_TIMEOUT_DEFAULT_MS = 30_000;
    public static final String CONTROLLER_PROP_NAME = "inagg.agent.controller";
    /** Read when neither {@link #controller(String)} nor the property is set (as {@code inagg worker} does). */
    public static final String CONTROLLER_ENV = "INAGG_CONTROLLER";
    public static final String CONTROLLER_WAIT_PROP_NAME = "inagg.agent.controller.wait.ms";
    public static final long CONTROLLER_WAIT_DEFAULT_MS = 60_000;
    public static final String COLLECTIVE_TIMEOUT_PROP_NAME = "inagg.agent.collective.timeout.ms";
    /** 30 min, torch's default process-group timeout; ranks of inagg_torch send their own in the hello. */
    public static final long COLLECTIVE_TIMEOUT_DEFAULT_MS = 30 * 60_000;

    private String name;
    private Path directory;
    private Path socketPath;
    private String allowGroup;
    private long slotBytes = -1;
    private int reducerThreads = -1;
    private long chunkBytes = CHUNK_BYTES_AUTO;
    private long networkChunkBytes = -1;
    private InetSocketAddress switchAddress;
    private InetSocketAddress bindAddress = new InetSocketAddress(0);
    private String jobKey;
    private Duration idleExit;
    private Duration peerTimeout;
    private Duration retransmitTimeout;
    private int maxLanes = org.inagg.services.worker.WorkerContext.MAX_LANES_DEFAULT;
    private Duration collectiveTimeout;
    private String controller;
    private Duration controllerWait;
    private CounterRegistry counters;
    private boolean concluded;

    /** The agent's name: its socket is {@code <directory>/inagg-agent-<name>.sock}, its jobs' files start with it. */
    public HostAgentContext name(final String name)
    {
        this.name = name;
        return this;
    }

    /**
     * The agent's private directory ({@link PrivateDirectory}): its socket, lock and jobs' shared-memory files. Created
     * mode 0700 when missing; an existing one must be this user's, a real directory, closed to others. Default:
     * {@code /dev/shm/inagg-<uid>}, else {@code <java.io.tmpdir>/inagg-<uid>} where there is no /dev/shm.
     */
    public HostAgentContext directory(final Path directory)
    {
        this.directory = directory;
        return this;
    }

    /** The socket's path, when not the default one in {@link #directory}. */
    public HostAgentContext socketPath(final Path socketPath)
    {
        this.socketPath = socketPath;
        return this;
    }

    /**
     * A group whose members may use the agent besides its own user (their effective group must be it: {@code sg}, or
     * their primary group); the directory becomes rwx--x--- and the files rw-rw---- with that group. None by default.
     */
    public HostAgentContext allowGroup(final String allowGroup)
    {
        this.allowGroup = allowGroup;
        return this;
    }

    /**
     * Bytes of each rank's data region (and of the result): the most one round carries. The ranks cut tensors into
     * rounds of a slot, so every host of a job spanning hosts needs the same value: the ranks compare the hosts' slots
     * when they make their process group and refuse it, naming both, where they differ ({@link SharedRegion}).
     */
    public HostAgentContext slotBytes(final long slotBytes)
    {
        this.slotBytes = slotBytes;
        return this;
    }

    /** Threads that sum a large round (the agent's own included); 2 by default where there are 2 cores. */
    public HostAgentContext reducerThreads(final int reducerThreads)
    {
        this.reducerThreads = reducerThreads;
        return this;
    }

    /**
     * Bytes of the chunks a sum's round is copied in, summed and sent through the switch in, overlapping those stages
     * ({@link RoundPipeline}); 0: whole rounds, one stage after the other; {@link #CHUNK_BYTES_AUTO} (the default): see
     * {@link #chunkBytesFor}.
     */
    public HostAgentContext chunkBytes(final long chunkBytes)
    {
        this.chunkBytes = chunkBytes;
        return this;
    }

    /**
     * Bytes of the chunks a sum goes through the switch in, each as soon as it is summed, and is copied out in as they
     * come back ({@link RoundPipeline}); 0: the round goes through the switch whole, once summed. Independent of
     * {@link #chunkBytes(long)} (with whole rounds the chunks go out one after another once the round is summed), so
     * that hosts with different cores (and so different {@link #chunkBytesFor}) cut a round the same way; it must be
     * the same on every host of a job, or the hosts' packets do not match at the switch (which waits for the missing
     * ones until the peer timeout). The agent writes it into each job's header; the ranks compare it across hosts when
     * they make their process group and refuse it, naming both values, where it differs ({@link SharedRegion}).
     */
    public HostAgentContext networkChunkBytes(final long networkChunkBytes)
    {
        this.networkChunkBytes = networkChunkBytes;
        return this;
    }

    /** The switch that multi-host jobs all-reduce through (UDP); none by default: single-host jobs only. */
    public HostAgentContext switchAddress(final InetSocketAddress switchAddress)
    {
        this.switchAddress = switchAddress;
        return this;
    }

    /**
     * The local UDP address multi-host jobs send from: the source a switch with admission has registered for this
     * host ({@code inagg switch --source}, a bmv2 job); any address and an ephemeral port by default.
     */
    public HostAgentContext bindAddress(final InetSocketAddress bindAddress)
    {
        this.bindAddress = bindAddress;
        return this;
    }

    /** Serve only this job key (refuse ranks of others); any job by default. */
    public HostAgentContext jobKey(final String jobKey)
    {
        this.jobKey = jobKey;
        return this;
    }

    /** Exit after this long without a job (ranks start agents with it); never by default ({@link Duration#ZERO}). */
    public HostAgentContext idleExit(final Duration idleExit)
    {
        this.idleExit = idleExit;
        return this;
    }

    /**
     * The smallest retransmission timeout of multi-host rounds through the switch (the measured one is used above it);
     * the worker protocol's default (2 ms) when not set. A software target such as bmv2 takes milliseconds per packet.
     */
    public HostAgentContext retransmitTimeout(final Duration retransmitTimeout)
    {
        if (retransmitTimeout != null && (retransmitTimeout.isNegative() || retransmitTimeout.isZero()))
        {
            throw new IllegalArgumentException("retransmission timeout " + retransmitTimeout + " must be positive");
        }
        this.retransmitTimeout = retransmitTimeout;
        return this;
    }

    /** The smallest retransmission timeout through the switch, or null for the protocol's default. */
    public Duration retransmitTimeout()
    {
        return retransmitTimeout;
    }

    /**
     * The largest lanes per packet a multi-host job's switch may ask for (as {@code inagg worker --max-lanes}): the
     * default, 363, carries the switch's default packets within a 1500-byte MTU; on jumbo-frame links a switch job of
     * larger packets needs more (2,048 lanes fit within a 9000-byte MTU). A job asking for more is refused at its JOIN,
     * naming both.
     */
    public HostAgentContext maxLanes(final int maxLanes)
    {
        if (maxLanes < 1 || maxLanes > org.inagg.services.worker.WorkerContext.MAX_LANES_LIMIT)
        {
            throw new IllegalArgumentException("max lanes " + maxLanes + " must be in 1.."
                + org.inagg.services.worker.WorkerContext.MAX_LANES_LIMIT + " (a UDP datagram's payload)");
        }
        this.maxLanes = maxLanes;
        return this;
    }

    /** The largest lanes per packet a multi-host job's switch may ask for. */
    public int maxLanes()
    {
        return maxLanes;
    }

    /** How long the switch stage waits without progress before the round fails. */
    public HostAgentContext peerTimeout(final Duration peerTimeout)
    {
        this.peerTimeout = peerTimeout;
        return this;
    }

    /**
     * How long a round waits, after the first local rank rang, for the job's other local ranks, when their hello does
     * not say ({@link Hello#collectiveTimeoutMs()} 0); past it the job fails on every rank naming the missing ones.
     */
    public HostAgentContext collectiveTimeout(final Duration collectiveTimeout)
    {
        this.collectiveTimeout = collectiveTimeout;
        return this;
    }

    /**
     * The controller (docs/controller.md) that gives multi-host jobs their switch, switch job and worker: the agent
     * registers as worker {@code hostIndex} of the job named by the ranks' job key; instead of {@link #switchAddress}
     * and the ranks' {@code INAGG_SWITCH_JOB}. Default: {@value #CONTROLLER_PROP_NAME}, else {@value #CONTROLLER_ENV}.
     */
    public HostAgentContext controller(final String controllerUrl)
    {
        this.controller = controllerUrl;
        return this;
    }

    /** How long a multi-host job's registration waits for the other hosts' agents (60 s by default). */
    public HostAgentContext controllerWait(final Duration controllerWait)
    {
        this.controllerWait = controllerWait;
        return this;
    }

    public HostAgentContext counters(final CounterRegistry counters)
    {
        this.counters = counters;
        return this;
    }

    /** Fills defaults and validates; call once before use. @return this. */
    public HostAgentContext conclude()
    {
        if (concluded)
        {
            return this;
        }
        if (name == null)
        {
            name = System.getProperty(NAME_PROP_NAME, NAME_DEFAULT);
        }
        if (name.isEmpty() || !name.matches("[A-Za-z0-9._-]{1,64}"))
        {
            throw new IllegalArgumentException("agent name '" + name + "' must be 1-64 of [A-Za-z0-9._-]");
        }
        if (directory == null)
        {
            final String property = System.getProperty(DIRECTORY_PROP_NAME);
            directory = property != null ? Path.of(property) : defaultDirectory();
        }
        if (allowGroup == null)
        {
            allowGroup = System.getProperty(ALLOW_GROUP_PROP_NAME);
        }
        if (allowGroup != null && allowGroup.isBlank())
        {
            allowGroup = null;
        }
        if (socketPath == null)
        {
            socketPath = directory.resolve("inagg-agent-" + name + ".sock");
        }
        if (socketPath.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 107)
        {
            throw new IllegalArgumentException("socket path " + socketPath + " is longer than a Unix socket allows"
                + " (107 bytes)");
        }
        if (slotBytes < 0)
        {
            slotBytes = Long.getLong(SLOT_BYTES_PROP_NAME, SLOT_BYTES_DEFAULT);
        }
        if (slotBytes < 4096 || slotBytes % 4096 != 0 || slotBytes > (1L << 34))
        {
            throw new IllegalArgumentException("slot bytes " + slotBytes + " must be a multiple of 4096 in 4096.."
                + (1L << 34));
        }
        if (chunkBytes == CHUNK_BYTES_AUTO)
        {
            chunkBytes = Long.getLong(CHUNK_BYTES_PROP_NAME, CHUNK_BYTES_AUTO);
        }
        if (chunkBytes != 0 && chunkBytes != CHUNK_BYTES_AUTO && (chunkBytes < 4096 || chunkBytes % 4096 != 0 || chunkBytes > (1L << 30)))
        {
            throw new IllegalArgumentException("chunk bytes " + chunkBytes + " must be 0 (whole rounds), "
                + CHUNK_BYTES_AUTO + " (by the host's cores) or a multiple of 4096 in 4096.." + (1L << 30));
        }
        if (networkChunkBytes < 0)
        {
            networkChunkBytes = Long.getLong(NETWORK_CHUNK_BYTES_PROP_NAME, NETWORK_CHUNK_BYTES_DEFAULT);
        }
        if (networkChunkBytes != 0 && (networkChunkBytes < 4096 || networkChunkBytes % 4096 != 0
            || networkChunkBytes > (1L << 30)))
        {
            throw new IllegalArgumentException("network chunk bytes " + networkChunkBytes + " must be 0 (whole rounds) "
                + "or a multiple of 4096 in 4096.." + (1L << 30));
        }
        if (reducerThreads < 0)
        {
            reducerThreads = Integer.getInteger(REDUCER_THREADS_PROP_NAME,
                Math.min(2, Runtime.getRuntime().availableProcessors()));
        }
        if (reducerThreads < 1 || reducerThreads > 64)
        {
            throw new IllegalArgumentException("reducer threads " + reducerThreads + " must be in 1..64");
        }
        if (idleExit == null)
        {
            idleExit = Duration.ofMillis(Long.getLong(IDLE_EXIT_PROP_NAME, 0));
        }
        if (idleExit.isNegative())
        {
            throw new IllegalArgumentException("idle exit " + idleExit + " is negative");
        }
        if (peerTimeout == null)
        {
            peerTimeout = Duration.ofMillis(Long.getLong(PEER_TIMEOUT_PROP_NAME, PEER_TIMEOUT_DEFAULT_MS));
        }
        if (peerTimeout.toMillis() < 1)
        {
            throw new IllegalArgumentException("peer timeout " + peerTimeout + " must be at least 1 ms");
        }
        if (collectiveTimeout == null)
        {
            collectiveTimeout = Duration.ofMillis(Long.getLong(COLLECTIVE_TIMEOUT_PROP_NAME,
                COLLECTIVE_TIMEOUT_DEFAULT_MS));
        }
        if (collectiveTimeout.toMillis() < 1)
        {
            throw new IllegalArgumentException("collective timeout " + collectiveTimeout + " must be at least 1 ms");
        }
        if (controller == null)
        {
            controller = System.getProperty(CONTROLLER_PROP_NAME, System.getenv(CONTROLLER_ENV));
        }
        if (controller != null && controller.isBlank())
        {
            controller = null;
        }
        if (controllerWait == null)
        {
            controllerWait = Duration.ofMillis(Long.getLong(CONTROLLER_WAIT_PROP_NAME, CONTROLLER_WAIT_DEFAULT_MS));
        }
        if (controllerWait.toMillis() < 1)
        {
            throw new IllegalArgumentException("controller wait " + controllerWait + " must be at least 1 ms");
        }
        if (counters == null)
        {
            counters = new CounterRegistry(64);
        }
        concluded = true;
        return this;
    }

    /** {@code /dev/shm/inagg-<uid>}, else {@code <java.io.tmpdir>/inagg-<uid>}. */
    public static Path defaultDirectory()
    {
        final Path shm = Path.of(DIRECTORY_PARENT_DEFAULT);
        final Path parent = Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        return parent.resolve("inagg-" + PrivateDirectory.currentUid());
    }

    public String name()
    {
        return name;
    }

    public Path directory()
    {
        return directory;
    }

    /** The group allowed besides the agent's user, or null. */
    public String allowGroup()
    {
        return allowGroup;
    }

    public Path socketPath()
    {
        return socketPath;
    }

    public long slotBytes()
    {
        return slotBytes;
    }

    /** As set: bytes, 0 (whole rounds) or {@link #CHUNK_BYTES_AUTO}; a job's chunks are {@link #chunkBytesFor}. */
    public long chunkBytes()
    {
        return chunkBytes;
    }

    /** The chunks of a job of {@code localRanks} ranks on this host: {@link #chunkBytesFor(long, int, int)}. */
    public long chunkBytesFor(final int localRanks)
    {
        return chunkBytesFor(chunkBytes, Runtime.getRuntime().availableProcessors(), localRanks);
    }

    /**
     * The chunks of a job: {@code configured} when set; by default {@link #CHUNK_BYTES_DEFAULT} where the host has more
     * cores than the job's local ranks, else whole rounds (0). Chunks overlap a rank's copy of the next chunk with the
     * agent's sum of the last one, which takes a core the ranks leave free; without one the two only take turns, and the
     * chunks' doorbells and sums cost more than they hide: on 2 cores with 4 ranks whole rounds were 4-7 % faster at 4 Mi
     * and 16 Mi float32, back-to-back and after a barrier, and equal at 1 Mi (docs/performance.md, "Chunked rounds in
     * the agent"). Each job decides alone: two jobs on one host each count only their own ranks.
     */
    public static long chunkBytesFor(final long configured, final int cores, final int localRanks)
    {
        if (configured != CHUNK_BYTES_AUTO)
        {
            return configured;
        }
        return cores > localRanks ? CHUNK_BYTES_DEFAULT : 0;
    }

    public long networkChunkBytes()
    {
        return networkChunkBytes;
    }

    public int reducerThreads()
    {
        return reducerThreads;
    }

    public InetSocketAddress switchAddress()
    {
        return switchAddress;
    }

    public InetSocketAddress bindAddress()
    {
        return bindAddress;
    }

    public String jobKey()
    {
        return jobKey;
    }

    public Duration idleExit()
    {
        return idleExit;
    }

    public Duration peerTimeout()
    {
        return peerTimeout;
    }

    public Duration collectiveTimeout()
    {
        return collectiveTimeout;
    }

    /** The controller's URL, or null: multi-host jobs use {@link #switchAddress()}. */
    public String controller()
    {
        return controller;
    }

    public Duration controllerWait()
    {
        return controllerWait;
    }

    public CounterRegistry counters()
    {
        return counters;
    }
}
