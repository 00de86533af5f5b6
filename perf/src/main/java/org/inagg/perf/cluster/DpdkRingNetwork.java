package org.inagg.perf.cluster;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.EthPort;
import org.inagg.ffi.dpdk.MbufPool;
import org.inagg.transport.Transport;
import org.inagg.transport.dpdk.DpdkEal;
import org.inagg.transport.dpdk.DpdkPeer;
import org.inagg.transport.dpdk.DpdkPorts;
import org.inagg.transport.dpdk.DpdkTransport;
import org.inagg.transport.dpdk.DpdkTransportConfig;

/**
 * A switch and W workers joined in this process by DPDK {@code net_ring} ports, one port per worker-switch link.
 * <pre>
 *   switch DpdkTransport (W links)                                 worker w DpdkTransport (1 link)
 *   link w: port "iaNlw" rx queue 0, tx queue 1  ---- ring 1 --->  port "iaNlw" rx queue 1
 *                                                <--- ring 0 ----  port "iaNlw" tx queue 0
 * </pre>
 * Each link is one net_ring port hot-plugged with {@code nodeaction=iaNlw:0:CREATE}: its 16 queues are 16 rings, and
 * the driver sends on queue q into ring q and receives on queue q from ring q. The switch's end of link w sends on
 * queue 1 and receives on queue 0, the worker's end the other way round, so each ring has one producer thread and one
 * consumer thread, as net_ring's single-producer/single-consumer rings require, however the agents are spread over
 * threads. (Two ports cannot share a ring set in one process: net_ring names the port after the rings.)
 * <p>
 * Addresses: the switch is 02:00:00:00:00:01 / 10.0.0.1:9000 and learns its workers; worker w is
 * 02:00:00:01:ww:ww / 10.1.hi(w).lo(w):9000 with the switch as its peer 0. One mbuf pool serves the whole network;
 * {@link #close()} drains the rings, closes the ports and fails when the pool did not get every mbuf back. EAL is
 * started on first use (no hugepages, no PCI, 512 MiB) and serves every later network of the process; DPDK has at most
 * 32 ports, so a network has at most 30 workers.
 */
final class DpdkRingNetwork implements AutoCloseable
{
    static final int MAX_WORKERS = 30;
    private static final long SWITCH_MAC = 0x02_00_00_00_00_01L;
    private static final int SWITCH_IP = 0x0A_00_00_01;
    private static final int UDP_PORT = 9000;
    private static final int DESCRIPTORS = 1024;
    private static final int BURST = 32;
    private static final AtomicInteger NEXT_NETWORK = new AtomicInteger();

    private final List<EthPort> ports = new ArrayList<>();
    private final List<Transport> workerTransports = new ArrayList<>();
    private final MbufPool pool;
    private final int availableAtStart;
    private final Transport switchTransport;
    private boolean closed;

    DpdkRingNetwork(final int workers, final int maxMessageLength)
    {
        if (workers > MAX_WORKERS)
        {
            throw new IllegalArgumentException("the DPDK transport of a local cluster joins at most " + MAX_WORKERS
                + " workers (one net_ring port each, DPDK has 32 ports), asked for " + workers);
        }
        final Eal eal = DpdkEal.currentOrStart(DpdkEal.noHugeConfig("local"));
        final int network = NEXT_NETWORK.getAndIncrement();
        // Every link's rings hold up to 2 x 1023 mbufs; claims that find the pool empty count as losses.
        pool = MbufPool.create("inagg_local_" + network, poolSize(workers), 128, MbufPool.DATA_ROOM_DEFAULT, -1);
        try
        {
            final DpdkTransportConfig switchConfig = new DpdkTransportConfig().localMac(SWITCH_MAC).localIp(SWITCH_IP)
                .localUdpPort(UDP_PORT).maxPeers(workers + 1).maxMessageLength(maxMessageLength).burst(BURST)
                .startPorts(false).pool(pool);
            final List<DpdkTransportConfig> workerConfigs = new ArrayList<>();
            for (int w = 0; w < workers; w++)
            {
                final String name = "ia" + network + "l" + w;
                eal.probe("net_ring_inagg" + network + "_" + w + ",nodeaction=" + name + ":0:CREATE");
                final EthPort port = EthPort.byName(name);
                ports.add(port);
                port.configure(2, 2);
                for (int q = 0; q < 2; q++)
                {
                    port.setupRxQueue(q, DESCRIPTORS, pool).setupTxQueue(q, DESCRIPTORS);
                }
                port.start();
                switchConfig.link(name, 0, 1);
                workerConfigs.add(new DpdkTransportConfig().link(name, 1, 0)
                    .localMac(0x02_00_00_01_00_00L | w).localIp(0x0A_01_00_00 | w).localUdpPort(UDP_PORT)
                    .peer(new DpdkPeer(SWITCH_MAC, SWITCH_IP, UDP_PORT, 0))
                    .maxPeers(1).maxMessageLength(maxMessageLength).burst(BURST).startPorts(false).pool(pool));
            }
            availableAtStart = pool.availableCount();
            switchTransport = DpdkTransport.open(switchConfig);
            for (final DpdkTransportConfig config : workerConfigs)
            {
                workerTransports.add(DpdkTransport.open(config));
            }
        }
        catch (final RuntimeException ex)
        {
            closePorts();
            pool.close();
            throw ex;
        }
    }

    private static int poolSize(final int workers)
    {
        final int wanted = workers * 2 * 1024 + 4096;
        return Integer.highestOneBit(wanted - 1) * 2 - 1;
    }

    Transport switchTransport()
    {
        return switchTransport;
    }

    List<Transport> workerTransports()
    {
        return workerTransports;
    }

    /**
     * After every agent has closed its transport: drains the rings, closes the ports and the pool.
     *
     * @throws IllegalStateException when mbufs went missing.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        closePorts();
        final int availableAtEnd = pool.availableCount();
        pool.close();
        if (availableAtEnd != availableAtStart)
        {
            throw new IllegalStateException("DPDK mbuf leak: the pool had " + availableAtStart
                + " mbufs free at start and " + availableAtEnd + " after the cluster closed");
        }
    }

    private void closePorts()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            for (final EthPort port : ports)
            {
                if (port.isStarted())
                {
                    DpdkPorts.drain(port.id(), 2, mbufs, BURST);
                }
                port.close();
            }
        }
        ports.clear();
    }
}
