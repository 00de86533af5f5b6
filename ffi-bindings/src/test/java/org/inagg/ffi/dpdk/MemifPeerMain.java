package org.inagg.ffi.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * One side of {@link MemifTest}, in its own process with its own EAL: {@code server} echoes what it receives,
 * {@code client} sends numbered 1 KiB packets and checks every echo. Both then shut down cleanly (stop, close, free
 * the pool, rte_eal_cleanup) and check that the pool got every mbuf back.
 *
 * <p>Arguments: {@code server|client <socket path> <packet count>}. Exit code 0 when everything checked out.
 */
public final class MemifPeerMain
{
    private static final int BURST = 32;
    private static final int WINDOW = 256;
    private static final int LANES = 256;
    private static final int LENGTH = LANES * Integer.BYTES;
    private static final long DEADLINE_NS = 60_000_000_000L;
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    public static void main(final String[] args) throws Exception
    {
        final String role = args[0];
        final String socket = args[1];
        final int count = Integer.parseInt(args[2]);
        final boolean ok;
        final Eal eal = Eal.init(DpdkTestEnvironment.baseConfig("memif-" + role)
            .vdev("net_memif0,role=" + role + ",id=0,socket=" + socket + ",socket-abstract=no"));
        final MbufPool pool = MbufPool.create("memif_" + role, 4095, 128, MbufPool.DATA_ROOM_DEFAULT, Dpdk.socketId());
        final int availableAtStart = pool.availableCount();
        final EthPort port = EthPort.byName("net_memif0").configure(1, 1)
            .setupRxQueue(0, 1024, pool).setupTxQueue(0, 1024).start();
        if (!port.awaitLinkUp(30_000))
        {
            System.out.println(role + ": LINK-DOWN");
            System.exit(3);
        }
        System.out.println(role + ": LINK-UP " + port.link());
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            ok = "server".equals(role) ? echo(port, mbufs, count) : sendAndCheck(port, pool, mbufs, count);
        }
        if ("server".equals(role))
        {
            Thread.sleep(500); // let the client drain its last echoes before the link goes down
        }
        final PortStats stats = port.stats();
        port.stop();
        port.close();
        final int availableAtEnd = pool.availableCount();
        System.out.println(role + ": STATS " + stats);
        System.out.println(role + ": POOL start=" + availableAtStart + " end=" + availableAtEnd);
        pool.close();
        eal.close();
        System.out.println(role + ": SHUTDOWN-OK");
        System.exit(ok && availableAtEnd == availableAtStart ? 0 : 1);
    }

    private static boolean echo(final EthPort port, final MemorySegment mbufs, final int count)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        int echoed = 0;
        while (echoed < count && System.nanoTime() - deadline < 0)
        {
            final int got = port.rxBurst(0, mbufs, BURST);
            int sent = 0;
            while (sent < got && System.nanoTime() - deadline < 0)
            {
                sent += port.txBurst(0, sent == 0 ? mbufs : mbufs.asSlice(sent * FastPath.POINTER_BYTES), got - sent);
            }
            FastPath.bulkFree(mbufs, sent, got - sent);
            echoed += sent;
        }
        System.out.println("server: ECHOED " + echoed);
        return echoed == count;
    }

    private static boolean sendAndCheck(
        final EthPort port, final MbufPool pool, final MemorySegment mbufs, final int count)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        int sent = 0;
        int received = 0;
        int corrupt = 0;
        while (received < count && System.nanoTime() - deadline < 0)
        {
            final int n = Math.min(BURST, Math.min(count - sent, WINDOW - (sent - received)));
            if (n > 0 && pool.bulkAlloc(mbufs, n))
            {
                for (int i = 0; i < n; i++)
                {
                    final MemorySegment m = FastPath.mbufAt(mbufs, i);
                    final MemorySegment data = FastPath.data(m, LENGTH);
                    for (int lane = 0; lane < LANES; lane++)
                    {
                        data.setAtIndex(BE_INT, lane, RingLoopbackTest.lanePattern(sent + i, lane));
                    }
                    FastPath.setLen(m, LENGTH);
                }
                final int accepted = port.txBurst(0, mbufs, n);
                FastPath.bulkFree(mbufs, accepted, n - accepted);
                sent += accepted;
            }
            final int got = port.rxBurst(0, mbufs, BURST);
            for (int i = 0; i < got; i++)
            {
                final MemorySegment m = FastPath.mbufAt(mbufs, i);
                if (FastPath.pktLen(m) != LENGTH)
                {
                    corrupt++;
                    continue;
                }
                final MemorySegment data = FastPath.data(m, LENGTH);
                for (int lane = 0; lane < LANES; lane++)
                {
                    if (data.getAtIndex(BE_INT, lane) != RingLoopbackTest.lanePattern(received + i, lane))
                    {
                        corrupt++;
                        break;
                    }
                }
            }
            FastPath.bulkFree(mbufs, got);
            received += got;
        }
        System.out.println("client: SENT " + sent + " RECEIVED " + received + " CORRUPT " + corrupt);
        return sent == count && received == count && corrupt == 0;
    }
}
