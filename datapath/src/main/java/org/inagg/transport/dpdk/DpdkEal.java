package org.inagg.transport.dpdk;

import java.util.concurrent.atomic.AtomicReference;

import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.EalConfig;

/**
 * Starts DPDK's EAL for this process in a way that suits a JVM.
 * <p>
 * {@code rte_eal_init} pins the thread that calls it to the main lcore's CPU, and Linux threads inherit the affinity
 * of the thread that creates them: called on {@code main}, it would put every agent thread started later on one CPU.
 * {@link #start} therefore calls it on a short-lived thread of its own. Polling threads get an lcore id (and with it a
 * mempool cache) from {@link DpdkTransport} when they first use it.
 */
public final class DpdkEal
{
    private DpdkEal()
    {
    }

    /**
     * Initialises EAL on a helper thread.
     *
     * @throws org.inagg.ffi.dpdk.EalException carrying EAL's error and log when {@code rte_eal_init} fails.
     * @throws IllegalStateException when EAL was already initialised (or tried) in this process.
     */
    public static Eal start(final EalConfig config)
    {
        final AtomicReference<Object> outcome = new AtomicReference<>();
        final Thread starter = Thread.ofPlatform().name("inagg-eal-init").unstarted(() ->
        {
            try
            {
                outcome.set(Eal.init(config));
            }
            catch (final RuntimeException | Error ex)
            {
                outcome.set(ex);
            }
        });
        starter.start();
        boolean interrupted = false;
        while (true)
        {
            try
            {
                starter.join();
                break;
            }
            catch (final InterruptedException ex)
            {
                interrupted = true; // EAL init cannot be abandoned half way
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
        final Object result = outcome.get();
        if (result instanceof RuntimeException ex)
        {
            throw ex;
        }
        if (result instanceof Error error)
        {
            throw error;
        }
        return (Eal)result;
    }

    /** The running EAL, or one started with {@code config} when there is none yet. */
    public static synchronized Eal currentOrStart(final EalConfig config)
    {
        final Eal current = Eal.current();
        return current != null ? current : start(config);
    }

    /** Settings for virtual devices and tests: no hugepages, no PCI scan, 512 MiB, a file prefix of our own. */
    public static EalConfig noHugeConfig(final String prefixTag)
    {
        return new EalConfig().lcores("0").noHuge(true).memoryMb(512).noPci(true)
            .filePrefix("inagg-" + prefixTag + "-" + ProcessHandle.current().pid());
    }
}
