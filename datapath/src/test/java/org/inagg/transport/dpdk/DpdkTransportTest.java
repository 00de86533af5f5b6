package org.inagg.transport.dpdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.EthPort;
import org.inagg.ffi.dpdk.FastPath;
import org.inagg.ffi.dpdk.Mbuf;
import org.inagg.ffi.dpdk.MbufPool;
import org.inagg.ffi.dpdk.NativeLibraryLoader;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.frame.UdpFrameCodec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link DpdkTransport} over {@code net_ring0}, a port whose transmit queue loops into its receive queue: frames as
 * sent are checked byte by byte, peers are learned, foreign frames dropped and counted, the polling loop allocates
 * nothing, and the pool gets every mbuf back.
 */
@Timeout(120)
class DpdkTransportTest
{
    private static final String RING = "net_ring0";
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final long MAC_A = 0x02_00_00_00_00_0AL;
    private static final long MAC_B = 0x02_00_00_00_00_0BL;
    private static final int IP_A = 0x0A_00_00_01;
    private static final int IP_B = 0x0A_00_00_02;
    private static final long MAC_C = 0x02_00_00_00_00_0CL;
    private static final int IP_C = 0x0A_00_00_03;

    private static MbufPool pool;
    private static EthPort port;

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
        DpdkEal.currentOrStart(DpdkEal.noHugeConfig("datapath-test").vdev(RING));
        pool = MbufPool.create("transport_test", 4095, 64, MbufPool.DATA_ROOM_DEFAULT, -1);
        port = EthPort.byName(RING).configure(1, 1).setupRxQueue(0, 1024, pool).setupTxQueue(0, 1024).start();
    }

    @AfterAll
    static void stop()
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

    private static DpdkTransportConfig config(final long mac, final int ip, final int udpPort)
    {
        return new DpdkTransportConfig().port(RING).startPorts(false).pool(pool).localMac(mac).localIp(ip)
            .localUdpPort(udpPort).burst(32).maxPeers(4);
    }

    @Test
    void shouldSendFramesThatParseBackIntactAndLearnTheSender()
    {
        final int available = pool.availableCount();
        try (DpdkTransport a = DpdkTransport.open(config(MAC_A, IP_A, 9000)
                .peer(new DpdkPeer(MAC_B, IP_B, 9001, 0)));
             DpdkTransport b = DpdkTransport.open(config(MAC_B, IP_B, 9001)))
        {
            final int count = 100;
            for (int i = 0; i < count; i++)
            {
                final int length = 20 + 4 * i;
                final long at = a.claim(0, length);
                assertThat(at).isNotEqualTo(Transport.CLAIM_FAILED);
                for (int off = 0; off < length; off += 4)
                {
                    a.txMemory().set(U32, at + off, i * 1000 + off);
                }
                a.commit();
                if (i % 7 == 0)
                {
                    a.flush();
                }
            }
            a.flush();
            assertThat(a.framesSent()).isEqualTo(count);

            final List<String> problems = new ArrayList<>();
            final int[] seen = new int[1];
            final MessageHandler check = (memory, offset, length, peer) ->
            {
                final int i = seen[0]++;
                if (peer != 0 || length != 20 + 4 * i)
                {
                    problems.add("message " + i + ": peer " + peer + " length " + length);
                }
                for (int off = 0; off < length; off += 4)
                {
                    if (memory.get(U32, offset + off) != i * 1000 + off)
                    {
                        problems.add("message " + i + " lane at " + off);
                        break;
                    }
                }
                problems.addAll(checkHeaders(memory, offset - DpdkTransport.HEADERS_LENGTH, length));
            };
            int polled = 0;
            for (int tries = 0; polled < count && tries < 100; tries++)
            {
                polled += b.poll(check, 64);
            }
            assertThat(problems).isEmpty();
            assertThat(polled).isEqualTo(count);
            final long bytes = 20L * count + 4L * count * (count - 1) / 2;
            assertThat(a.counters().get(TransportCounter.MESSAGES_SENT)).isEqualTo(count);
            assertThat(a.counters().get(TransportCounter.BYTES_SENT)).isEqualTo(bytes);
            assertThat(b.counters().get(TransportCounter.MESSAGES_RECEIVED)).isEqualTo(count);
            assertThat(b.counters().get(TransportCounter.BYTES_RECEIVED)).isEqualTo(bytes);
            assertThat(b.peersLearned()).isEqualTo(1);
            assertThat(b.describePeer(0)).contains("10.0.0.1:9000").contains("02:00:00:00:00:0a");

            // b answers its learned peer; a knows b as peer 0
            final long at = b.claim(0, 24);
            b.txMemory().set(U32, at, 0xCAFEBABE);
            b.commit();
            b.flush();
            final int[] fromPeer = {-2};
            final int[] firstLane = new int[1];
            assertThat(pollOnce(a, (memory, offset, length, peer) ->
            {
                fromPeer[0] = peer;
                firstLane[0] = memory.get(U32, offset);
            })).isEqualTo(1);
            assertThat(fromPeer[0]).isZero();
            assertThat(firstLane[0]).isEqualTo(0xCAFEBABE);
            assertThat(a.peersLearned()).isZero();

            // a second source on the same link becomes b's peer 1, and b's answer reaches it
            try (DpdkTransport c = DpdkTransport.open(config(MAC_C, IP_C, 9002).peer(new DpdkPeer(MAC_B, IP_B, 9001, 0))))
            {
                c.claim(0, 20);
                c.commit();
                c.flush();
                assertThat(pollOnce(b, (memory, offset, length, peer) -> fromPeer[0] = peer)).isEqualTo(1);
                assertThat(fromPeer[0]).isEqualTo(1);
                assertThat(b.peerCount()).isEqualTo(2);
                assertThat(b.describePeer(1)).contains("10.0.0.3:9002");
                b.claim(1, 20);
                b.commit();
                b.flush();
                assertThat(pollOnce(c, (memory, offset, length, peer) -> fromPeer[0] = peer)).isEqualTo(1);
                assertThat(fromPeer[0]).isZero();
            }

            // a frame to b that a receives is not for a: dropped and counted
            a.claim(0, 20);
            a.abort();
            a.claim(0, 20);
            a.commit();
            a.flush();
            assertThat(pollOnce(a, (memory, offset, length, peer) -> problems.add("a took b's frame"))).isZero();
            assertThat(a.counters().get(TransportCounter.DROP_NOT_FOR_US)).isEqualTo(1);
            assertThat(problems).isEmpty();

            // claims to unknown peers or of oversized messages fail
            assertThat(a.claim(1, 20)).isEqualTo(Transport.CLAIM_FAILED);
            assertThat(a.claim(0, a.maxMessageLength() + 1)).isEqualTo(Transport.CLAIM_FAILED);

            // an open claim and queued frames are freed on close
            a.claim(0, 100);
            a.commit();
            a.claim(0, 100);
        }
        assertThat(pool.availableCount()).as("every mbuf back in the pool").isEqualTo(available);
    }

    @Test
    void shouldDropAndCountFramesThatAreNotIpv4UdpToOurAddressAndPortOrComeFromPortZero()
    {
        final int available = pool.availableCount();
        try (DpdkTransport b = DpdkTransport.open(config(MAC_B, IP_B, 9001));
             Arena arena = Arena.ofConfined())
        {
            final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, 8);
            assertThat(pool.bulkAlloc(mbufs, 8)).isTrue();
            final int good = 60;
            for (int i = 0; i < 8; i++)
            {
                final long m = Mbuf.at(mbufs, i);
                final long frame = Mbuf.dataAddress(m);
                UdpFrameCodec.write(Mbuf.MEMORY, frame, MAC_A, IP_A, i == 7 ? 0 : 9000, MAC_B, IP_B, 9001, good - 42);
                Mbuf.setLen(m, good);
                switch (i)
                {
                    case 0 -> { } // valid: delivered
                    case 1 -> Mbuf.MEMORY.set(U16, frame + 12, (short)0x86DD); // IPv6
                    case 2 -> Mbuf.MEMORY.set(U16, frame + 36, (short)9002); // another UDP port
                    case 3 -> Mbuf.MEMORY.set(ValueLayout.JAVA_BYTE, frame + 23, (byte)6); // TCP
                    case 4 -> Mbuf.MEMORY.set(U16, frame + 24, (short)0x1234); // bad header checksum
                    case 5 -> Mbuf.setLen(m, 30); // truncated
                    case 6 -> Mbuf.MEMORY.set(U32, frame + 30, IP_A); // another destination
                    case 7 -> { } // from UDP source port 0: no reply could reach it
                    default -> throw new IllegalStateException();
                }
            }
            assertThat(FastPath.txBurstFreeUnsent(port.id(), 0, mbufs, 8)).isEqualTo(8);
            final int[] delivered = new int[1];
            assertThat(pollOnce(b, (memory, offset, length, peer) -> delivered[0] += length == good - 42 ? 1 : 100))
                .isEqualTo(1);
            assertThat(delivered[0]).isEqualTo(1);
            assertThat(b.framesReceived()).isEqualTo(8);
            assertThat(b.counters().get(TransportCounter.DROP_NOT_FOR_US)).isEqualTo(6);
            assertThat(b.counters().get(TransportCounter.DROP_SOURCE_PORT_ZERO)).isEqualTo(1);
            assertThat(b.peerCount()).as("the valid sender; source port 0 is never learned").isEqualTo(1);
        }
        assertThat(pool.availableCount()).isEqualTo(available);
    }

    @Test
    void shouldPinARegisteredSourceToTheMacOfTheFrameBeingHandedUpAndHandUpAnotherMacFromItsUnpinnedPeerAttack()
    {
        final int available = pool.availableCount();
        // a: a switch with worker b's source registered; b and the forger c send from the same ip:port, other MACs
        try (DpdkTransport a = DpdkTransport.open(config(MAC_A, IP_A, 9000));
             DpdkTransport b = DpdkTransport.open(config(MAC_B, IP_B, 9001).peer(new DpdkPeer(MAC_A, IP_A, 9000, 0)));
             DpdkTransport c = DpdkTransport.open(config(MAC_C, IP_B, 9001).peer(new DpdkPeer(MAC_A, IP_A, 9000, 0))))
        {
            final int source = a.addPeer(new java.net.InetSocketAddress("10.0.0.2", 9001));
            assertThat(source).isZero();
            assertThat(a.peerAddress(source)).isEqualTo(new java.net.InetSocketAddress("10.0.0.2", 9001));
            assertThat(a.localAddress()).isEqualTo(new java.net.InetSocketAddress("10.0.0.1", 9000));
            assertThat(a.isPinned(source)).isFalse();
            assertThat(a.claim(source, 20)).as("no MAC to send to before a JOIN pins one")
                .isEqualTo(Transport.CLAIM_FAILED);

            final int[] from = {-2, -2};
            send(c, 1);
            assertThat(pollOnce(a, (memory, offset, length, peer) -> from[0] = peer)).isEqualTo(1);
            assertThat(from[0]).as("the forger's frame comes from the unpinned peer").isGreaterThanOrEqualTo(4);
            assertThat(a.claimedPeer(from[0])).isEqualTo(source);
            assertThat(a.pin(from[0])).as("only while its message is handed up").isFalse();
            assertThat(a.isPinned(source)).isFalse();

            send(b, 2);
            assertThat(pollOnce(a, (memory, offset, length, peer) ->
            {
                from[0] = peer;
                from[1] = a.pin(peer) ? 1 : 0; // the switch accepted b's JOIN
            })).isEqualTo(1);
            assertThat(from[1]).isEqualTo(1);
            assertThat(a.isPinned(source)).isTrue();
            assertThat(a.describePeer(source)).contains("10.0.0.2:9001").contains("02:00:00:00:00:0b");

            send(b, 3);
            assertThat(pollOnce(a, (memory, offset, length, peer) -> from[0] = peer)).isEqualTo(1);
            assertThat(from[0]).as("the pinned MAC's frames are the source's").isEqualTo(source);
            send(c, 4);
            assertThat(pollOnce(a, (memory, offset, length, peer) -> from[0] = peer)).isEqualTo(1);
            assertThat(from[0]).as("another MAC's are not").isEqualTo(4 + source);
            assertThat(a.framesFromUnpinnedSources()).isEqualTo(3);
            assertThat(a.describeCounters()).contains("unpinned MAC 3");

            // a's frames to the source go to the pinned MAC (b and c share its IPv4 address: the frame's MAC tells)
            final long[] destination = new long[1];
            assertThat(a.claim(source, 20)).isNotEqualTo(Transport.CLAIM_FAILED);
            a.commit();
            a.flush();
            assertThat(pollOnce(b, (memory, offset, length, peer) -> destination[0] = destinationMac(memory,
                offset - DpdkTransport.HEADERS_LENGTH))).isEqualTo(1);
            assertThat(destination[0]).isEqualTo(MAC_B);

            assertThat(a.removePeer(source)).isTrue();
            assertThat(a.peerAddress(source)).isNull();
        }
        assertThat(pool.availableCount()).isEqualTo(available);
    }

    private static void send(final DpdkTransport from, final int value)
    {
        final long at = from.claim(0, 20);
        from.txMemory().set(U32, at, value);
        from.commit();
        from.flush();
    }

    private static long destinationMac(final MemorySegment memory, final long frame)
    {
        return (Short.toUnsignedLong(memory.get(U16, frame)) << 32) | Integer.toUnsignedLong(memory.get(U32,
            frame + 2));
    }

    @Test
    void shouldAllocateNothingOnTheHeapWhenSendingAndReceivingOnceWarm()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final int available = pool.availableCount();
        try (DpdkTransport a = DpdkTransport.open(config(MAC_A, IP_A, 9000).peer(new DpdkPeer(MAC_A, IP_A, 9000, 0))))
        {
            final long[] sum = new long[1];
            final MessageHandler handler = (memory, offset, length, peer) -> sum[0] += memory.get(U32, offset) + peer;
            final List<Long> windows = new ArrayList<>();
            for (int window = 0; window < 12; window++)
            {
                final long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 20_000; i++)
                {
                    for (int m = 0; m < 32; m++)
                    {
                        final long at = a.claim(0, 1044);
                        a.txMemory().set(U32, at, m);
                        a.commit();
                    }
                    a.flush();
                    a.poll(handler, 32);
                }
                final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
                windows.add(allocated);
            }
            assertThat(sum[0]).isPositive();
            assertThat(a.counters().get(TransportCounter.DROP_NOT_FOR_US)).isZero();
            assertThat(a.framesReceived()).isEqualTo(a.framesSent()).isEqualTo(12L * 20_000 * 32);
            // The first windows run interpreted code and compile; once warm the loop must allocate nothing.
            assertThat(windows.subList(windows.size() - 3, windows.size())).as("heap bytes per window %s", windows)
                .containsOnly(0L);
        }
        assertThat(pool.availableCount()).isEqualTo(available);
    }

    @Test
    void shouldRejectBadSettingsAndNameMissingPorts()
    {
        assertThatThrownBy(() -> new DpdkTransportConfig().port(RING).pool(pool).localIp("10.0.0.1").conclude())
            .hasMessageContaining("localMac");
        assertThatThrownBy(() -> DpdkPeer.parse("02:00:00:00:00:01-10.0.0.1:9000"))
            .hasMessageContaining("MAC/IP:PORT");
        assertThat(DpdkPeer.parse("02:00:00:00:00:01/10.0.0.1:9000@2"))
            .isEqualTo(new DpdkPeer(0x02_00_00_00_00_01L, 0x0A_00_00_01, 9000, 2));
        assertThatThrownBy(() -> DpdkTransport.open(new DpdkTransportConfig().port("net_nothing9").pool(pool)
            .localMac(MAC_A).localIp(IP_A)))
            .hasMessageContaining("cannot find DPDK port 'net_nothing9'")
            .hasMessageContaining(RING);
        try (MbufPool small = MbufPool.create("small_room", 63, 0, 512 + Mbuf.HEADROOM_DEFAULT, -1))
        {
            assertThatThrownBy(() -> DpdkTransport.open(config(MAC_A, IP_A, 9000).pool(small)))
                .hasMessageContaining("does not fit the 512 bytes of an mbuf of pool small_room");
            assertThat(small.availableCount()).isEqualTo(63);
        }
        assertThat(Eal.current()).isNotNull();
    }

    private static int pollOnce(final DpdkTransport transport, final MessageHandler handler)
    {
        int got = 0;
        for (int i = 0; i < 10; i++)
        {
            got += transport.poll(handler, 32);
        }
        return got;
    }

    /** Checks a frame's Ethernet, IPv4 and UDP headers independently of the transport's code. */
    private static List<String> checkHeaders(final MemorySegment memory, final long frame, final int messageLength)
    {
        final List<String> problems = new ArrayList<>();
        final long dst = destinationMac(memory, frame);
        final long src = (Short.toUnsignedLong(memory.get(U16, frame + 6)) << 32) | Integer.toUnsignedLong(
            memory.get(U32, frame + 8));
        if (dst != MAC_B || src != MAC_A || memory.get(U16, frame + 12) != 0x0800)
        {
            problems.add("ethernet header");
        }
        int sum = 0;
        for (int i = 0; i < 20; i += 2)
        {
            sum += Short.toUnsignedInt(memory.get(U16, frame + 14 + i));
        }
        while ((sum >>> 16) != 0)
        {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        if (sum != 0xFFFF)
        {
            problems.add("IPv4 header checksum sums to " + Integer.toHexString(sum));
        }
        if (memory.get(U16, frame + 14) != 0x4500 || memory.get(U16, frame + 16) != 28 + messageLength
            || memory.get(ValueLayout.JAVA_BYTE, frame + 23) != 17 || memory.get(U32, frame + 26) != IP_A
            || memory.get(U32, frame + 30) != IP_B)
        {
            problems.add("IPv4 header");
        }
        if (memory.get(U16, frame + 34) != 9000 || memory.get(U16, frame + 36) != 9001
            || memory.get(U16, frame + 38) != 8 + messageLength || memory.get(U16, frame + 40) != 0)
        {
            problems.add("UDP header");
        }
        return problems;
    }
}
