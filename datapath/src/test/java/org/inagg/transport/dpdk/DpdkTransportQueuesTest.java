package org.inagg.transport.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.EthPort;
import org.inagg.ffi.dpdk.MbufPool;
import org.inagg.ffi.dpdk.NativeLibraryLoader;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One queue pair per worker thread on one port: a net_ring port with 4 queues (each queue a ring from its transmit
 * side to its receive side) carries two workers, each polling and sending on its own thread through its own queue
 * pair, and a switch with one link per worker on the same port:
 * <pre>
 *   switch link w: rx queue 2w, tx queue 2w+1   ---- ring 2w+1 --->  worker w: rx queue 2w+1
 *                                               <--- ring 2w ------  worker w: tx queue 2w
 * </pre>
 * Every message reaches the switch on its worker's link and comes back to that worker only; the pool gets every mbuf
 * back. Also: a transport that configures a multi-queue port itself asks for RSS and gets it only where the device
 * offers it.
 */
@Timeout(60)
class DpdkTransportQueuesTest
{
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final long SWITCH_MAC = 0x02_00_00_00_00_01L;
    private static final int SWITCH_IP = 0x0A_00_00_01;
    private static final int WORKERS = 2;
    private static final int MESSAGES = 2_000;
    private static final int WINDOW = 32;

    private static MbufPool pool;

    @BeforeAll
    static void startEal()
    {
        final String reason = NativeLibraryLoader.unavailableReason();
        if (reason != null)
        {
            if (Boolean.getBoolean("inagg.dpdk.tests.require"))
            {
                Assertions.fail("DPDK is required here (-Dinagg.dpdk.tests.require=true) but " + reason);
            }
            Assumptions.abort("DPDK not available: " + reason);
        }
        // the same settings as DpdkTransportTest: whichever class runs first starts EAL for both
        DpdkEal.currentOrStart(DpdkEal.noHugeConfig("datapath-test").vdev("net_ring0"));
        pool = MbufPool.create("queues_test", 4095, 64, MbufPool.DATA_ROOM_DEFAULT, -1);
    }

    @AfterAll
    static void stop()
    {
        if (pool != null)
        {
            pool.close();
        }
    }

    private static int workerIp(final int w)
    {
        return 0x0A_00_01_01 + w;
    }

    @Test
    void shouldGiveEachWorkerThreadItsOwnQueuePairOfOnePort() throws Exception
    {
        final Eal eal = Eal.current();
        eal.probe("net_ring_wq0");
        final int availableAtStart = pool.availableCount();
        final EthPort port = EthPort.byName("net_ring_wq0");
        try
        {
            // shared by three transports: configured here, the transports are told not to (startPorts(false))
            assertThat(port.configureRss(2 * WORKERS, 2 * WORKERS, EthPort.RSS_IPV4_UDP)).isZero();
            for (int q = 0; q < 2 * WORKERS; q++)
            {
                port.setupRxQueue(q, 1024, pool).setupTxQueue(q, 1024);
            }
            port.start();

            final DpdkTransportConfig switchConfig = new DpdkTransportConfig().localMac(SWITCH_MAC)
                .localIp(SWITCH_IP).startPorts(false).pool(pool).maxPeers(WORKERS);
            for (int w = 0; w < WORKERS; w++)
            {
                switchConfig.link("net_ring_wq0", 2 * w, 2 * w + 1);
            }
            final List<String> problems = new CopyOnWriteArrayList<>();
            final List<Thread> threads = new ArrayList<>();
            try (DpdkTransport switchTransport = DpdkTransport.open(switchConfig))
            {
                for (int w = 0; w < WORKERS; w++)
                {
                    final int worker = w;
                    // distinct UDP source ports too, as RSS by 4-tuple on a NIC would need
                    final DpdkTransportConfig config = new DpdkTransportConfig().link("net_ring_wq0", 2 * w + 1, 2 * w)
                        .localMac(0x02_00_00_00_01_00L + w).localIp(workerIp(w)).localUdpPort(9001 + w)
                        .peer(new DpdkPeer(SWITCH_MAC, SWITCH_IP, DpdkTransportConfig.LOCAL_UDP_PORT_DEFAULT, 0))
                        .startPorts(false).pool(pool).maxPeers(1);
                    final DpdkTransport transport = DpdkTransport.open(config);
                    threads.add(Thread.ofPlatform().name("worker-" + w).start(() -> runWorker(worker, transport,
                        problems)));
                }
                final long deadline = System.nanoTime() + 30_000_000_000L;
                final int[] fromLinkOf = new int[WORKERS];
                final MessageHandler echo = (memory, offset, length, peer) ->
                {
                    final int worker = memory.get(U32, offset);
                    if (peer < 0 || worker < 0 || worker >= WORKERS)
                    {
                        problems.add("switch: message from peer " + peer + " of worker " + worker);
                        return;
                    }
                    fromLinkOf[worker]++;
                    final long at = switchTransport.claim(peer, length);
                    if (at == Transport.CLAIM_FAILED)
                    {
                        problems.add("switch: claim failed");
                        return;
                    }
                    MemorySegment.copy(memory, offset, switchTransport.txMemory(), at, length);
                    switchTransport.commit();
                };
                while (threads.stream().anyMatch(Thread::isAlive) && System.nanoTime() < deadline)
                {
                    switchTransport.poll(echo, 64);
                    switchTransport.flush();
                }
                for (final Thread thread : threads)
                {
                    thread.join(5_000);
                }
                assertThat(problems).isEmpty();
                assertThat(threads).noneMatch(Thread::isAlive);
                assertThat(fromLinkOf).containsOnly(MESSAGES);
                assertThat(switchTransport.peerCount()).isEqualTo(WORKERS);
                for (int p = 0; p < WORKERS; p++)
                {
                    // each worker learned on the link (queue pair) its frames came from
                    final String peer = switchTransport.describePeer(p);
                    final int w = peer.contains("10.0.1.1:9001") ? 0 : 1;
                    assertThat(peer).contains(DpdkPeer.formatIp(workerIp(w)) + ":" + (9001 + w))
                        .endsWith("rxq " + 2 * w + " txq " + (2 * w + 1) + ")");
                }
                assertThat(switchTransport.counters().get(TransportCounter.DROP_NOT_FOR_US)).isZero();
                assertThat(switchTransport.rssHashTypes(0)).as("not configured by the transport").isZero();
            }
        }
        finally
        {
            try (Arena arena = Arena.ofConfined())
            {
                DpdkPorts.drain(port.id(), 2 * WORKERS, arena.allocate(ValueLayout.ADDRESS, 32), 32);
            }
            port.close();
        }
        assertThat(pool.availableCount()).as("every mbuf back in the pool").isEqualTo(availableAtStart);
    }

    /** Sends {@link #MESSAGES} messages in windows, each answered by the switch, then closes on its own thread. */
    private static void runWorker(final int worker, final DpdkTransport transport, final List<String> problems)
    {
        try (transport)
        {
            final long deadline = System.nanoTime() + 20_000_000_000L;
            final int[] received = new int[1];
            final MessageHandler check = (memory, offset, length, peer) ->
            {
                final int from = memory.get(U32, offset);
                final int seq = memory.get(U32, offset + 4);
                if (peer != 0 || from != worker || seq != received[0] || length != 8 + 4 * (seq % 16))
                {
                    problems.add("worker " + worker + ": got peer " + peer + " worker " + from + " seq " + seq
                        + " length " + length + ", expected seq " + received[0]);
                }
                received[0]++;
            };
            int sent = 0;
            while (sent < MESSAGES && problems.isEmpty())
            {
                final int window = Math.min(WINDOW, MESSAGES - sent);
                for (int i = 0; i < window; i++, sent++)
                {
                    final int length = 8 + 4 * (sent % 16);
                    final long at = transport.claim(0, length);
                    if (at == Transport.CLAIM_FAILED)
                    {
                        problems.add("worker " + worker + ": claim failed");
                        return;
                    }
                    transport.txMemory().set(U32, at, worker);
                    transport.txMemory().set(U32, at + 4, sent);
                    transport.commit();
                }
                transport.flush();
                while (received[0] < sent && problems.isEmpty())
                {
                    transport.poll(check, 64);
                    if (System.nanoTime() > deadline)
                    {
                        problems.add("worker " + worker + ": timed out with " + received[0] + " of " + sent);
                        return;
                    }
                }
            }
            if (transport.counters().get(TransportCounter.DROP_NOT_FOR_US) != 0 || transport.framesSent() != MESSAGES)
            {
                problems.add("worker " + worker + ": " + transport.describeCounters());
            }
        }
        catch (final RuntimeException | Error ex)
        {
            problems.add("worker " + worker + ": " + ex);
        }
    }

    @Test
    void shouldAskForRssWhenConfiguringAMultiQueuePortAndGetItOnlyWhereOffered()
    {
        final Eal eal = Eal.current();
        final int availableAtStart = pool.availableCount();
        // net_ring offers no RSS hashing: configured without; queue 1 loops to queue 1, which link 1 receives on
        eal.probe("net_ring_wq1");
        try (DpdkTransport ring = DpdkTransport.open(new DpdkTransportConfig().link("net_ring_wq1", 0, 1)
            .link("net_ring_wq1", 1, 0).localMac(SWITCH_MAC).localIp(SWITCH_IP).pool(pool)
            .peer(new DpdkPeer(SWITCH_MAC, SWITCH_IP, DpdkTransportConfig.LOCAL_UDP_PORT_DEFAULT, 0))))
        {
            assertThat(ring.rssHashTypes(0)).isZero();
            ring.claim(0, 20);
            ring.commit();
            ring.flush();
            int got = 0;
            for (int i = 0; i < 10 && got == 0; i++)
            {
                got += ring.poll((memory, offset, length, peer) -> { }, 32);
            }
            assertThat(got).isEqualTo(1);
        }
        // net_null offers RSS hash types, as a NIC does: the transport gets UDP/IPv4 hashing, unless told not to
        eal.probe("net_null_wq0");
        try (DpdkTransport hashed = DpdkTransport.open(new DpdkTransportConfig().link("net_null_wq0", 0, 0)
            .link("net_null_wq0", 1, 1).localMac(SWITCH_MAC).localIp(SWITCH_IP).pool(pool)))
        {
            assertThat(hashed.rssHashTypes(0)).isEqualTo(EthPort.RSS_IPV4_UDP);
            assertThat(hashed.rssHashTypes(1)).isEqualTo(EthPort.RSS_IPV4_UDP);
        }
        eal.probe("net_null_wq1");
        try (DpdkTransport plain = DpdkTransport.open(new DpdkTransportConfig().link("net_null_wq1", 0, 0)
            .link("net_null_wq1", 1, 1).localMac(SWITCH_MAC).localIp(SWITCH_IP).pool(pool).rss(false)))
        {
            assertThat(plain.rssHashTypes(0)).isZero();
        }
        assertThat(pool.availableCount()).as("every mbuf back in the pool").isEqualTo(availableAtStart);
    }
}
