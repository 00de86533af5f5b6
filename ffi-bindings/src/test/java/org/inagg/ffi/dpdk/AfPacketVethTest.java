package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * net_af_packet on both ends of a veth pair, hot-plugged into the shared EAL with {@link Eal#probe(String)}: frames sent
 * on one end arrive intact on the other. Needs iproute2 and CAP_NET_ADMIN to create the pair; skips, saying so, without (fails instead with
 * {@code -Dinagg.root.tests.require=true}, as in CI).
 * Frames carry the IEEE local experimental EtherType 0x88B5 so that the kernel's own traffic on the link is ignored.
 */
@Timeout(60)
class AfPacketVethTest
{
    private static final int BURST = 32;
    private static final int ETHERTYPE = 0x88B5;
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort BE_SHORT =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static final String SIDE_A = "inagg" + (ProcessHandle.current().pid() % 100_000) + "a";
    private static final String SIDE_B = "inagg" + (ProcessHandle.current().pid() % 100_000) + "b";

    private static boolean vethCreated;
    private static String vethFailure;
    private static MbufPool pool;
    private static EthPort portA;
    private static EthPort portB;

    @BeforeAll
    static void setUp() throws Exception
    {
        if (NativeLibraryLoader.unavailableReason() != null)
        {
            return; // each test then skips (or fails, when DPDK is required) in assumeEnvironment below
        }
        final Eal eal = DpdkTestEnvironment.eal();
        vethFailure = ip("link", "add", SIDE_A, "type", "veth", "peer", "name", SIDE_B);
        if (vethFailure != null)
        {
            return;
        }
        vethCreated = true;
        for (final String side : List.of(SIDE_A, SIDE_B))
        {
            ip("link", "set", side, "up");
            run("sysctl", "-q", "-w", "net.ipv6.conf." + side + ".disable_ipv6=1"); // fewer stray frames; optional
        }
        eal.probe("net_af_packet_" + SIDE_A + ",iface=" + SIDE_A);
        eal.probe("net_af_packet_" + SIDE_B + ",iface=" + SIDE_B);
        pool = MbufPool.create("afpacket_test_pool", 2047, 64, MbufPool.DATA_ROOM_DEFAULT, Dpdk.socketId());
        portA = EthPort.byName("net_af_packet_" + SIDE_A).configure(1, 1)
            .setupRxQueue(0, 512, pool).setupTxQueue(0, 512).start();
        portB = EthPort.byName("net_af_packet_" + SIDE_B).configure(1, 1)
            .setupRxQueue(0, 512, pool).setupTxQueue(0, 512).start();
    }

    @BeforeEach
    void assumeEnvironment()
    {
        DpdkTestEnvironment.assumeDpdk();
        DpdkTestEnvironment.assumeSetUp("a veth pair", vethFailure);
    }

    @AfterAll
    static void tearDown() throws Exception
    {
        if (portA != null)
        {
            portA.close();
        }
        if (portB != null)
        {
            portB.close();
        }
        if (pool != null)
        {
            pool.close();
        }
        if (vethCreated)
        {
            ip("link", "del", SIDE_A);
        }
    }

    @Test
    void shouldCarryFramesIntactAcrossVethPair() throws InterruptedException
    {
        assertThat(portA.awaitLinkUp(5000)).isTrue();
        final int total = 2000;
        final int length = 256;
        final int availableAtStart = pool.availableCount();
        int sent = 0;
        int received = 0;
        int foreign = 0;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment tx = arena.allocate(ValueLayout.ADDRESS, BURST);
            final MemorySegment rx = arena.allocate(ValueLayout.ADDRESS, BURST);
            while (received < total && System.nanoTime() - deadline < 0)
            {
                final int n = Math.min(BURST, Math.min(total - sent, 128 - (sent - received)));
                if (n > 0 && pool.bulkAlloc(tx, n))
                {
                    for (int i = 0; i < n; i++)
                    {
                        final long m = Mbuf.at(tx, i);
                        final long d = Mbuf.dataAddress(m);
                        for (int b = 0; b < 12; b++)
                        {
                            Mbuf.MEMORY.set(ValueLayout.JAVA_BYTE, d + b, (byte)(b < 6 ? 0xFF : 0x02)); // bcast, local
                        }
                        Mbuf.MEMORY.set(BE_SHORT, d + 12, (short)ETHERTYPE);
                        for (int off = 14; off + 4 <= length; off += 4)
                        {
                            Mbuf.MEMORY.set(BE_INT, d + off, (sent + i) * 1000 + off);
                        }
                        Mbuf.setLen(m, length);
                    }
                    final int accepted = portA.txBurst(0, tx, n);
                    FastPath.bulkFree(tx, accepted, n - accepted);
                    sent += accepted;
                }
                final int got = portB.rxBurst(0, rx, BURST);
                for (int i = 0; i < got; i++)
                {
                    final long m = Mbuf.at(rx, i);
                    final long d = Mbuf.dataAddress(m);
                    if (Short.toUnsignedInt(Mbuf.MEMORY.get(BE_SHORT, d + 12)) != ETHERTYPE)
                    {
                        foreign++;
                        continue;
                    }
                    assertThat(Mbuf.pktLen(m)).isEqualTo(length);
                    for (int off = 14; off + 4 <= length; off += 4)
                    {
                        assertThat(Mbuf.MEMORY.get(BE_INT, d + off)).isEqualTo(received * 1000 + off);
                    }
                    received++;
                }
                FastPath.bulkFree(rx, got);
            }
        }
        assertThat(sent).isEqualTo(total);
        assertThat(received).as("frames received (and %d foreign frames ignored)", foreign).isEqualTo(total);
        assertThat(portA.stats().opackets()).isGreaterThanOrEqualTo(total);
        assertThat(pool.availableCount()).isEqualTo(availableAtStart);
    }

    /** Runs {@code ip args}; returns null on success, else its output. */
    private static String ip(final String... args) throws IOException, InterruptedException
    {
        final String[] command = new String[args.length + 1];
        command[0] = "ip";
        System.arraycopy(args, 0, command, 1, args.length);
        return run(command);
    }

    private static String run(final String... command) throws IOException, InterruptedException
    {
        try
        {
            final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return p.waitFor() == 0 ? null : String.join(" ", command) + ": " + out.strip();
        }
        catch (final IOException ex)
        {
            return String.join(" ", command) + ": " + ex.getMessage();
        }
    }
}
