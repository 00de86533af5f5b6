package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** net_null0: rx makes 64-byte packets from the rx queue's pool, tx frees what it is given. */
@Timeout(60)
class NullDeviceTest
{
    private static final int BURST = 32;

    private static MbufPool pool;
    private static EthPort port;

    @BeforeAll
    static void setUp()
    {
        if (NativeLibraryLoader.unavailableReason() != null)
        {
            return; // each test then skips (or fails, when DPDK is required) in assumeDpdk below
        }
        DpdkTestEnvironment.eal();
        pool = MbufPool.create("null_test_pool", 2047, 64, MbufPool.DATA_ROOM_DEFAULT, Dpdk.socketId());
        port = EthPort.byName(DpdkTestEnvironment.NULL_DEVICE)
            .configure(1, 1)
            .setupRxQueue(0, 512, pool)
            .setupTxQueue(0, 512)
            .promiscuous()
            .start();
    }

    @BeforeEach
    void assumeDpdk()
    {
        DpdkTestEnvironment.assumeDpdk();
    }

    @AfterAll
    static void tearDown()
    {
        if (port != null)
        {
            port.close();
        }
        if (pool != null)
        {
            pool.close();
        }
    }

    @Test
    void shouldReceiveAndTransmitAndGiveEveryMbufBack()
    {
        final int total = 100_000;
        final int availableAtStart = pool.availableCount();
        port.resetStats();

        long received = 0;
        long transmitted = 0;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            while (received < total)
            {
                final int got = port.rxBurst(0, mbufs, BURST);
                for (int i = 0; i < got; i++)
                {
                    assertThat(FastPath.pktLen(FastPath.mbufAt(mbufs, i))).isEqualTo(64);
                }
                received += got;
                transmitted += FastPath.txBurstFreeUnsent(port.id(), 0, mbufs, got);
            }
            assertThat(pool.bulkAlloc(mbufs, BURST)).isTrue();
            for (int i = 0; i < BURST; i++)
            {
                FastPath.setLen(FastPath.mbufAt(mbufs, i), 128);
            }
            final int sent = port.txBurst(0, mbufs, BURST);
            FastPath.bulkFree(mbufs, sent, BURST - sent);
            transmitted += sent;
        }

        final PortStats stats = port.stats();
        assertThat(received).isEqualTo(total);
        assertThat(stats.ipackets()).isEqualTo(total);
        assertThat(stats.opackets()).isEqualTo(transmitted).isEqualTo(total + BURST);
        assertThat(pool.availableCount()).as("free mbufs after the run").isEqualTo(availableAtStart);
    }

    @Test
    void shouldCarryDpdkErrnoAndMessageWhenReconfiguringStartedPort()
    {
        assertThatThrownBy(() -> port.configure(1, 1))
            .isInstanceOf(DpdkException.class)
            .hasMessageContaining("rte_eth_dev_configure(port " + port.id())
            .hasMessageContaining("Device or resource busy")
            .extracting(ex -> ((DpdkException)ex).errno()).isEqualTo(16);
    }
}
