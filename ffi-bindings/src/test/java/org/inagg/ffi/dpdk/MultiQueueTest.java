package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link EthPort#configureRss}: a device without RSS hashing (net_ring) is configured with several queues and no RSS
 * (applied hash types 0), and its queue q still loops into queue q only; one receive queue never asks for RSS; net_null,
 * which does offer RSS hash types (as a NIC would), gets the UDP/IPv4 ones.
 * Each test hot-plugs its own device into the shared EAL.
 */
@Timeout(60)
class MultiQueueTest
{
    private static final int BURST = 32;
    private static final int QUEUES = 4;

    private static MbufPool pool;

    @BeforeAll
    static void setUp()
    {
        if (NativeLibraryLoader.unavailableReason() != null)
        {
            return; // each test then skips (or fails, when DPDK is required) in assumeDpdk below
        }
        DpdkTestEnvironment.eal();
        pool = MbufPool.create("mq_test_pool", 2047, 64, MbufPool.DATA_ROOM_DEFAULT, Dpdk.socketId());
    }

    @BeforeEach
    void assumeDpdk()
    {
        DpdkTestEnvironment.assumeDpdk();
    }

    @AfterAll
    static void tearDown()
    {
        if (pool != null)
        {
            pool.close();
        }
    }

    @Test
    void shouldConfigureSeveralQueuesWithoutRssOnRingAndKeepEachQueueApart()
    {
        assertThat(EthPort.RSS_IPV4_UDP).isEqualTo(0x24L); // RTE_BIT64(2) | RTE_BIT64(5) in DPDK 22.11
        DpdkTestEnvironment.eal().probe("net_ring_mq0");
        final int availableAtStart = pool.availableCount();
        try (EthPort port = EthPort.byName("net_ring_mq0"); Arena arena = Arena.ofConfined())
        {
            assertThat(port.configureRss(QUEUES, QUEUES, EthPort.RSS_IPV4_UDP)).as("net_ring has no RSS").isZero();
            for (int q = 0; q < QUEUES; q++)
            {
                port.setupRxQueue(q, 512, pool).setupTxQueue(q, 512);
            }
            port.start();

            final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            for (int q = 0; q < QUEUES; q++)
            {
                final int count = 8 + q;
                assertThat(pool.bulkAlloc(mbufs, count)).isTrue();
                for (int i = 0; i < count; i++)
                {
                    final long m = Mbuf.at(mbufs, i);
                    Mbuf.setLen(m, 64);
                    Mbuf.MEMORY.set(ValueLayout.JAVA_INT_UNALIGNED, Mbuf.dataAddress(m), q);
                }
                assertThat(port.txBurst(q, mbufs, count)).isEqualTo(count);
            }
            for (int q = 0; q < QUEUES; q++)
            {
                final int got = port.rxBurst(q, mbufs, BURST);
                assertThat(got).as("frames on rx queue %d", q).isEqualTo(8 + q);
                for (int i = 0; i < got; i++)
                {
                    assertThat(Mbuf.MEMORY.get(ValueLayout.JAVA_INT_UNALIGNED, Mbuf.dataAddress(Mbuf.at(mbufs, i))))
                        .as("queue the frame was sent on").isEqualTo(q);
                }
                FastPath.bulkFree(mbufs, got);
                assertThat(port.rxBurst(q, mbufs, BURST)).isZero();
            }
        }
        assertThat(pool.availableCount()).as("free mbufs after the run").isEqualTo(availableAtStart);
    }

    @Test
    void shouldApplyTheAskedHashTypesWhereTheDeviceOffersThem()
    {
        DpdkTestEnvironment.eal().probe("net_null_mq0");
        final int availableAtStart = pool.availableCount();
        try (EthPort port = EthPort.byName("net_null_mq0"); Arena arena = Arena.ofConfined())
        {
            assertThat(port.configureRss(2, 2, EthPort.RSS_IPV4_UDP)).isEqualTo(EthPort.RSS_IPV4_UDP);
            assertThat(port.configureRss(2, 2, 0)).as("no hash types asked: no RSS").isZero();
            assertThat(port.configureRss(2, 2, EthPort.RSS_IPV4_UDP | 1L << 60)).as("only what the device offers")
                .isEqualTo(EthPort.RSS_IPV4_UDP);
            for (int q = 0; q < 2; q++)
            {
                port.setupRxQueue(q, 256, pool).setupTxQueue(q, 256);
            }
            port.start();
            final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            for (int q = 0; q < 2; q++)
            {
                final int got = port.rxBurst(q, mbufs, BURST);
                assertThat(got).isEqualTo(BURST);
                assertThat(FastPath.txBurstFreeUnsent(port.id(), q, mbufs, got)).isEqualTo(got);
            }
        }
        assertThat(pool.availableCount()).as("free mbufs after the run").isEqualTo(availableAtStart);
    }

    @Test
    void shouldNotAskForRssWithOneReceiveQueue()
    {
        DpdkTestEnvironment.eal().probe("net_ring_mq1");
        try (EthPort port = EthPort.byName("net_ring_mq1"))
        {
            assertThat(port.configureRss(1, 2, EthPort.RSS_IPV4_UDP)).isZero();
            port.setupRxQueue(0, 256, pool).setupTxQueue(0, 256).setupTxQueue(1, 256).start();
            assertThat(port.isStarted()).isTrue();
        }
    }
}
