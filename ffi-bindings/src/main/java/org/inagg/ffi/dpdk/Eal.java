package org.inagg.ffi.dpdk;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import org.inagg.ffi.dpdk.extr.dpdk_h;
import org.inagg.ffi.dpdk.extr.inagg_dpdk_shim_h;

/**
 * DPDK's Environment Abstraction Layer for this process.
 *
 * <p>EAL initialises once per process: one attempt, successful or not. A failed {@code rte_eal_init} leaves state
 * behind (DPDK 22.11 then rejects a corrected command line, e.g. "Option -l is ignored, because (-l) is set"), and
 * after {@link #close()} ({@code rte_eal_cleanup}) EAL cannot start again. Design tests as one EAL per JVM and start
 * child processes for more.
 */
public final class Eal implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(Eal.class.getName());
    private static final int LOG_TAIL_BYTES = 8192;

    private static Eal instance;
    private static String attempted;
    private static boolean cleanedUp;

    private final EalConfig config;
    private boolean closed;

    private Eal(final EalConfig config)
    {
        this.config = config;
    }

    /**
     * Initialises EAL with the configuration.
     *
     * @throws EalException carrying {@code rte_strerror(rte_errno)} and EAL's log when {@code rte_eal_init} fails.
     * @throws IllegalStateException when {@code rte_eal_init} was already called in this process, whatever came of it.
     * @throws UnsatisfiedLinkError when the shim or DPDK cannot be loaded; see {@link NativeLibraryLoader}.
     */
    public static synchronized Eal init(final EalConfig config)
    {
        if (attempted != null)
        {
            throw new IllegalStateException("EAL " + (instance != null ? "is already initialised" :
                cleanedUp ? "was cleaned up" : "failed to initialise") + " in this process (" + attempted +
                "); DPDK allows one rte_eal_init attempt per process");
        }
        NativeLibraryLoader.load();
        final List<String> args = config.conclude().toArguments();
        attempted = String.join(" ", args);

        // EAL permutes argv and may keep pointers into it: the strings live as long as the process.
        final Arena arena = Arena.global();
        final MemorySegment argv = arena.allocate(ValueLayout.ADDRESS, args.size() + 1L);
        for (int i = 0; i < args.size(); i++)
        {
            argv.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(args.get(i)));
        }
        argv.setAtIndex(ValueLayout.ADDRESS, args.size(), MemorySegment.NULL);

        final boolean capturing = inagg_dpdk_shim_h.inagg_log_capture_start() == 0;
        final int rc = dpdk_h.rte_eal_init(args.size(), argv);
        final int errno = inagg_dpdk_shim_h.inagg_errno();
        final String log = capturing ? stopCapture() : "";
        if (rc < 0)
        {
            throw new EalException(
                "rte_eal_init failed: " + Dpdk.strerror(errno) + " (rte_errno " + errno + ")\n" +
                "  EAL arguments: " + String.join(" ", args) + "\n" +
                "  EAL log:\n" + (log.isBlank() ? "    (nothing logged)" : log.strip().indent(4)),
                errno,
                log);
        }
        LOGGER.log(Level.DEBUG, "EAL initialised with {0}", String.join(" ", args));
        instance = new Eal(config);
        return instance;
    }

    /** The running EAL, or {@code null}. */
    public static synchronized Eal current()
    {
        return instance;
    }

    private static String stopCapture()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buf = arena.allocate(LOG_TAIL_BYTES);
            inagg_dpdk_shim_h.inagg_log_capture_stop(buf, LOG_TAIL_BYTES);
            return buf.getString(0);
        }
    }

    public EalConfig config()
    {
        return config;
    }

    /** {@code rte_lcore_count()}. */
    public int lcoreCount()
    {
        return dpdk_h.rte_lcore_count();
    }

    /**
     * Hot-plugs a device after init ({@code rte_dev_probe}), e.g. {@code net_ring1}; find its port with
     * {@link EthPort#byName(String)}.
     */
    public void probe(final String devargs)
    {
        try (Arena arena = Arena.ofConfined())
        {
            DpdkException.check(dpdk_h.rte_dev_probe(arena.allocateFrom(devargs)), "rte_dev_probe(" + devargs + ")");
        }
    }

    /**
     * Gives the calling thread an EAL lcore id ({@code rte_thread_register}), and with it a per-lcore mempool cache:
     * without one every mbuf alloc and free goes to the pool's shared ring. Call from each polling thread.
     *
     * @return the lcore id.
     */
    public int registerCurrentThread()
    {
        final int id = inagg_dpdk_shim_h.inagg_thread_register();
        if (id < 0)
        {
            final int errno = Dpdk.rteErrno();
            throw new DpdkException("rte_thread_register failed: " + Dpdk.strerror(errno), errno);
        }
        return id;
    }

    /** {@code rte_thread_unregister}: returns the lcore id (flushing nothing: free mbufs first). */
    public void unregisterCurrentThread()
    {
        inagg_dpdk_shim_h.inagg_thread_unregister();
    }

    /** Pins the calling thread to one CPU ({@code pthread_setaffinity_np}). */
    public void pinCurrentThread(final int cpu)
    {
        DpdkException.check(inagg_dpdk_shim_h.inagg_thread_pin(cpu), "pthread_setaffinity_np(cpu " + cpu + ")");
    }

    /**
     * {@code rte_eal_cleanup}: releases EAL's resources. Stop and close ports and free pools first. EAL cannot be
     * initialised again in this process.
     */
    @Override
    public void close()
    {
        synchronized (Eal.class)
        {
            if (closed)
            {
                return;
            }
            closed = true;
            instance = null;
            cleanedUp = true;
            DpdkException.check(dpdk_h.rte_eal_cleanup(), "rte_eal_cleanup");
        }
    }
}
