package org.inagg.ffi.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.concurrent.locks.LockSupport;

/**
 * One side of {@link AfPacketNetnsTest}, run inside a network namespace: {@code receive} counts and checks frames of
 * EtherType 0x88B5 arriving on its veth end, {@code send} sends numbered frames, paced (32 per millisecond) so that
 * the receiver's af_packet ring never overflows. Both shut down cleanly and check the pool got every mbuf back.
 *
 * <p>Arguments: {@code send|receive <interface> <frame count>}. Exit code 0 when everything checked out.
 */
public final class AfPacketPeerMain
{
    static final int ETHERTYPE = 0x88B5;
    private static final int BURST = 32;
    private static final int LENGTH = 512;
    private static final long DEADLINE_NS = 30_000_000_000L;
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort BE_SHORT =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    public static void main(final String[] args) throws Exception
    {
        final String role = args[0];
        final String iface = args[1];
        final int count = Integer.parseInt(args[2]);
        // The kernel drops what does not fit the socket's ring (512 frames by default): a receiver descheduled for
        // 16 ms on a busy machine lost a burst (RECEIVED 2968, every later frame then out of place). Its ring holds
        // the whole run.
        final Eal eal = Eal.init(DpdkTestEnvironment.baseConfig("afp-" + role)
            .vdev("net_af_packet0,iface=" + iface + ("receive".equals(role) ? ",framecnt=4096" : "")));
        final MbufPool pool = MbufPool.create("afp_" + role, 2047, 64, MbufPool.DATA_ROOM_DEFAULT, Dpdk.socketId());
        final int availableAtStart = pool.availableCount();
        final EthPort port = EthPort.byName("net_af_packet0").configure(1, 1)
            .setupRxQueue(0, 512, pool).setupTxQueue(0, 512).start();
        if (!port.awaitLinkUp(10_000))
        {
            System.out.println(role + ": LINK-DOWN");
            System.exit(3);
        }
        final boolean ok;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
            if ("receive".equals(role))
            {
                System.out.println("receive: READY");
                System.out.flush();
                ok = receive(port, mbufs, count);
            }
            else
            {
                ok = send(port, pool, mbufs, count);
            }
        }
        port.close();
        final int availableAtEnd = pool.availableCount();
        System.out.println(role + ": POOL start=" + availableAtStart + " end=" + availableAtEnd);
        pool.close();
        eal.close();
        System.out.println(role + ": SHUTDOWN-OK");
        System.exit(ok && availableAtEnd == availableAtStart ? 0 : 1);
    }

    private static boolean send(final EthPort port, final MbufPool pool, final MemorySegment mbufs, final int count)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        int sent = 0;
        while (sent < count && System.nanoTime() - deadline < 0)
        {
            final int n = Math.min(BURST, count - sent);
            if (!pool.bulkAlloc(mbufs, n))
            {
                continue;
            }
            for (int i = 0; i < n; i++)
            {
                final long m = Mbuf.at(mbufs, i);
                final long d = Mbuf.dataAddress(m);
                for (int b = 0; b < 12; b++)
                {
                    Mbuf.MEMORY.set(ValueLayout.JAVA_BYTE, d + b, (byte)(b < 6 ? 0xFF : 0x02));
                }
                Mbuf.MEMORY.set(BE_SHORT, d + 12, (short)ETHERTYPE);
                for (int off = 14; off + 4 <= LENGTH; off += 4)
                {
                    Mbuf.MEMORY.set(BE_INT, d + off, (sent + i) * 7919 + off);
                }
                Mbuf.setLen(m, LENGTH);
            }
            final int accepted = port.txBurst(0, mbufs, n);
            FastPath.bulkFree(mbufs, accepted, n - accepted);
            sent += accepted;
            LockSupport.parkNanos(1_000_000);
        }
        System.out.println("send: SENT " + sent + " " + port.stats());
        return sent == count;
    }

    private static boolean receive(final EthPort port, final MemorySegment mbufs, final int count)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        int received = 0;
        int corrupt = 0;
        int foreign = 0;
        while (received < count && System.nanoTime() - deadline < 0)
        {
            final int got = port.rxBurst(0, mbufs, BURST);
            for (int i = 0; i < got; i++)
            {
                final long m = Mbuf.at(mbufs, i);
                final long d = Mbuf.dataAddress(m);
                if (Short.toUnsignedInt(Mbuf.MEMORY.get(BE_SHORT, d + 12)) != ETHERTYPE)
                {
                    foreign++;
                    continue;
                }
                boolean intact = Mbuf.pktLen(m) == LENGTH;
                for (int off = 14; intact && off + 4 <= LENGTH; off += 4)
                {
                    intact = Mbuf.MEMORY.get(BE_INT, d + off) == received * 7919 + off;
                }
                corrupt += intact ? 0 : 1;
                received++;
            }
            FastPath.bulkFree(mbufs, got);
        }
        System.out.println("receive: RECEIVED " + received + " CORRUPT " + corrupt + " FOREIGN " + foreign);
        return received == count && corrupt == 0;
    }
}
