package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** net_ring0 loops a port's tx queue into its rx queue: what goes out must come back intact. */
@Timeout(60)
class RingLoopbackTest
{
    private static final int BURST = 32;
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

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
        pool = MbufPool.create("ring_test_pool", 2047, 64, MbufPool.DATA_ROOM_DEFAULT, Dpdk.socketId());
        port = EthPort.byName(DpdkTestEnvironment.RING_DEVICE)
            .configure(1, 1)
            .setupRxQueue(0, 1024, pool)
            .setupTxQueue(0, 1024)
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
    void shouldReceiveEveryPacketSentWithItsPayloadIntactAndLeakNoMbuf()
    {
        final int total = 10_000;
        final int payloadInts = 256; // one INA packet: 256 big-endian int32 lanes
        final int length = payloadInts * Integer.BYTES;
        final int availableAtStart = pool.availableCount();
        final long opacketsAtStart = port.stats().opackets();

        int sent = 0;
        int received = 0;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment txMbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            final MemorySegment rxMbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            while (received < total)
            {
                final int n = Math.min(BURST, total - sent);
                if (n > 0)
                {
                    assertThat(pool.bulkAlloc(txMbufs, n)).isTrue();
                    for (int i = 0; i < n; i++)
                    {
                        final MemorySegment m = FastPath.mbufAt(txMbufs, i);
                        assertThat(FastPath.headroom(m)).isEqualTo(128);
                        assertThat(FastPath.tailroom(m)).isGreaterThanOrEqualTo(length);
                        final MemorySegment data = FastPath.data(m, length);
                        for (int lane = 0; lane < payloadInts; lane++)
                        {
                            data.setAtIndex(BE_INT, lane, lanePattern(sent + i, lane));
                        }
                        FastPath.setLen(m, length);
                    }
                    final int accepted = port.txBurst(0, txMbufs, n);
                    FastPath.bulkFree(txMbufs, accepted, n - accepted); // the ring was full: drop, count as unsent
                    sent += accepted;
                }
                final int got = port.rxBurst(0, rxMbufs, BURST);
                for (int i = 0; i < got; i++)
                {
                    final MemorySegment m = FastPath.mbufAt(rxMbufs, i);
                    assertThat(FastPath.dataLen(m)).isEqualTo(length);
                    assertThat(FastPath.pktLen(m)).isEqualTo(length);
                    final MemorySegment data = FastPath.data(m, length);
                    for (int lane = 0; lane < payloadInts; lane++)
                    {
                        assertThat(data.getAtIndex(BE_INT, lane)).isEqualTo(lanePattern(received + i, lane));
                    }
                }
                FastPath.bulkFree(rxMbufs, got);
                received += got;
            }
        }

        assertThat(sent).isEqualTo(total);
        assertThat(received).isEqualTo(total);
        assertThat(port.stats().opackets() - opacketsAtStart).isEqualTo(total);
        assertThat(pool.availableCount()).as("free mbufs after the run").isEqualTo(availableAtStart);
        assertThat(pool.inUseCount()).isZero();
    }

    @Test
    void shouldAllocAndFreeSingleMbufAndReportLinkUp()
    {
        final int availableAtStart = pool.availableCount();
        final MemorySegment m = pool.alloc();
        assertThat(m).isNotNull();
        assertThat(pool.availableCount()).isEqualTo(availableAtStart - 1);
        FastPath.setDataLen(m, 60);
        FastPath.setPktLen(m, 60);
        assertThat(FastPath.dataLen(m)).isEqualTo(60);
        assertThat(FastPath.pktLen(m)).isEqualTo(60);
        assertThat(FastPath.mbufDataAddress(m).address() - FastPath.headroom(m)).isPositive();
        FastPath.free(m);

        assertThat(pool.availableCount()).isEqualTo(availableAtStart);
        assertThat(port.link().up()).isTrue();
        assertThat(port.name()).isEqualTo(DpdkTestEnvironment.RING_DEVICE);
    }

    @Test
    void shouldSeeSameMbufFieldsInPlaceAsThroughShim()
    {
        final MemorySegment m = pool.alloc();
        final long address = m.address();
        try
        {
            assertThat(Mbuf.SIZE).isEqualTo(128);
            assertThat(Mbuf.dataAddress(address)).isEqualTo(FastPath.mbufDataAddress(m).address());
            assertThat(Mbuf.headroom(address)).isEqualTo(FastPath.headroom(m)).isEqualTo(128);
            assertThat(Mbuf.tailroom(address)).isEqualTo(FastPath.tailroom(m)).isEqualTo(2048);

            Mbuf.setLen(address, 1000);
            assertThat(FastPath.dataLen(m)).isEqualTo(1000);
            assertThat(FastPath.pktLen(m)).isEqualTo(1000);
            assertThat(Mbuf.tailroom(address)).isEqualTo(FastPath.tailroom(m)).isEqualTo(1048);

            FastPath.setDataLen(m, 70);
            FastPath.setPktLen(m, 71);
            assertThat(Mbuf.dataLen(address)).isEqualTo(70);
            assertThat(Mbuf.pktLen(address)).isEqualTo(71);

            Mbuf.MEMORY.set(BE_INT, Mbuf.dataAddress(address), 0x0A0B0C0D);
            assertThat(FastPath.data(m, 4).get(BE_INT, 0)).isEqualTo(0x0A0B0C0D);
        }
        finally
        {
            FastPath.free(m);
        }
    }

    @Test
    void shouldSendRawAllocatedMbufsPreparedInPlaceAndGetThemAllBack()
    {
        final int availableAtStart = pool.availableCount();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            assertThat(pool.rawBulkAlloc(mbufs, BURST)).isTrue();
            assertThat(pool.availableCount()).isEqualTo(availableAtStart - BURST);
            for (int i = 0; i < BURST; i++)
            {
                final long m = Mbuf.at(mbufs, i);
                final long data = Mbuf.prepareRaw(m, 100 + i);
                assertThat(data).isEqualTo(Mbuf.dataAddress(m));
                assertThat(Mbuf.headroom(m)).isEqualTo(Mbuf.HEADROOM_DEFAULT).isEqualTo(128);
                Mbuf.MEMORY.set(BE_INT, data, 7000 + i);
            }
            assertThat(port.txBurst(0, mbufs, BURST)).isEqualTo(BURST);
            assertThat(port.rxBurst(0, mbufs, BURST)).isEqualTo(BURST);
            for (int i = 0; i < BURST; i++)
            {
                final long m = Mbuf.at(mbufs, i);
                assertThat(Mbuf.pktLen(m)).isEqualTo(100 + i);
                assertThat(Mbuf.dataLen(m)).isEqualTo(100 + i);
                assertThat(Mbuf.MEMORY.get(BE_INT, Mbuf.dataAddress(m))).isEqualTo(7000 + i);
            }
            FastPath.bulkFree(mbufs, BURST);
        }
        assertThat(pool.availableCount()).isEqualTo(availableAtStart);
    }

    static int lanePattern(final int packet, final int lane)
    {
        return packet * 31 + lane * 0x01000193;
    }
}
