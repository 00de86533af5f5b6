package org.inagg.services.cli;

import java.io.PrintWriter;

import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.EalConfig;
import org.inagg.ffi.dpdk.EthPort;
import org.inagg.ffi.dpdk.MbufPool;
import org.inagg.transport.dpdk.DpdkEal;
import org.inagg.transport.dpdk.DpdkPeer;
import org.inagg.transport.dpdk.DpdkTransport;
import org.inagg.transport.dpdk.DpdkTransportConfig;

/**
 * What {@code --transport dpdk} sets up for one switch or worker process: EAL, an mbuf pool and a
 * {@link DpdkTransport} on the given ports; {@link #close()} takes them down in order and reports whether the pool got
 * every mbuf back.
 */
final class DpdkNode implements AutoCloseable
{
    private final Eal eal;
    private final MbufPool pool;
    private final DpdkTransport transport;
    private final int availableAtStart;
    private final PrintWriter out;
    private boolean closed;
    private boolean leaked;

    private DpdkNode(final Eal eal, final MbufPool pool, final DpdkTransport transport, final int availableAtStart,
        final PrintWriter out)
    {
        this.eal = eal;
        this.pool = pool;
        this.transport = transport;
        this.availableAtStart = availableAtStart;
        this.out = out;
    }

    /**
     * Starts EAL and opens the transport, whose peers learned from strangers' frames are at most
     * {@code maxLearnedPeers} of its {@code maxPeers} (the rest kept for sources registered at run time).
     *
     * @throws org.inagg.ffi.dpdk.EalException with EAL's error and log when EAL does not start.
     */
    static DpdkNode open(
        final DpdkOptions options, final String role, final int maxMessageLength, final int maxPeers,
        final int maxLearnedPeers, final PrintWriter out)
    {
        if (options.ports.isEmpty() || options.localMac == null || options.localIp == null)
        {
            throw new IllegalArgumentException("--transport dpdk needs --port, --local-mac and --local-ip");
        }
        final EalConfig ealConfig = new EalConfig().lcores(options.lcores)
            .filePrefix(options.filePrefix != null ? options.filePrefix
                : "inagg-" + role + "-" + ProcessHandle.current().pid());
        options.vdevs.forEach(ealConfig::vdev);
        if (!options.ealArgs.isBlank())
        {
            ealConfig.args(options.ealArgs.trim().split("\\s+"));
        }
        final Eal eal = DpdkEal.start(ealConfig);
        MbufPool pool = null;
        try
        {
            pool = MbufPool.create("inagg_" + role, options.mbufs, Math.min(256, options.mbufs / 8),
                MbufPool.DATA_ROOM_DEFAULT, -1);
            final int availableAtStart = pool.availableCount();
            final DpdkTransportConfig config = new DpdkTransportConfig().localMac(options.localMac)
                .localIp(options.localIp).localUdpPort(options.udpPort).burst(options.burst)
                .maxPeers(Math.max(maxPeers, options.peers.size())).maxLearnedPeers(Math.min(maxLearnedPeers, maxPeers))
                .maxMessageLength(maxMessageLength).pool(pool);
            for (final String port : options.ports)
            {
                final int at = port.lastIndexOf('@');
                final int queue = at < 0 ? 0 : Integer.parseInt(port.substring(at + 1));
                config.link(at < 0 ? port : port.substring(0, at), queue, queue);
            }
            options.peers.forEach(peer -> config.peer(DpdkPeer.parse(peer)));
            final DpdkTransport transport = DpdkTransport.open(config);
            out.printf("dpdk: EAL %s; %s%n", String.join(" ", ealConfig.toArguments()), config);
            out.flush();
            return new DpdkNode(eal, pool, transport, availableAtStart, out);
        }
        catch (final RuntimeException ex)
        {
            if (pool != null)
            {
                pool.close();
            }
            eal.close();
            throw ex;
        }
    }

    DpdkTransport transport()
    {
        return transport;
    }

    /** Waits until every link's port reports its link up; false after {@code timeoutMs}. */
    boolean awaitLinksUp(final long timeoutMs) throws InterruptedException
    {
        final long deadline = System.currentTimeMillis() + timeoutMs;
        for (int link = 0; link < transport.linkCount(); link++)
        {
            if (!EthPort.of(transport.portId(link)).awaitLinkUp(Math.max(1, deadline - System.currentTimeMillis())))
            {
                return false;
            }
        }
        return true;
    }

    /** True when, after {@link #close()}, the pool missed mbufs. */
    boolean leaked()
    {
        return leaked;
    }

    /**
     * Closes the transport (ports stopped and closed; normally already done by its agent's {@code onClose}), checks
     * the pool, frees it and cleans up EAL. Call after the agent using the transport has stopped.
     */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        transport.close();
        final int availableAtEnd = pool.availableCount();
        leaked = availableAtEnd != availableAtStart;
        out.printf("dpdk: %s%n", transport.describeCounters());
        out.printf("dpdk: mbufs free at start %d, after close %d%s%n", availableAtStart, availableAtEnd,
            leaked ? " LEAK" : "");
        out.flush();
        pool.close();
        eal.close();
    }
}
