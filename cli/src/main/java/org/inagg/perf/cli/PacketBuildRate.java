package org.inagg.perf.cli;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.MbufPool;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.transport.Transport;
import org.inagg.transport.dpdk.DpdkEal;
import org.inagg.transport.dpdk.DpdkPeer;
import org.inagg.transport.dpdk.DpdkTransport;
import org.inagg.transport.dpdk.DpdkTransportConfig;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;

/**
 * How fast one thread builds inagg packets into mbufs and sends them over DPDK: a {@link DpdkTransport} on
 * {@code net_null0} (whose transmit frees), per burst of 32 packets (1) claim each packet (an mbuf from the stash,
 * Ethernet/IPv4/UDP headers from the peer's template, IPv4 checksum) and write its inagg header, (2) quantize
 * {@code lanes} floats of a 1 MiB tensor into each packet's lanes, in place in the mbufs, (3) flush (one
 * {@code rte_eth_tx_burst}). The time of each stage is summed with one {@code System.nanoTime()} per stage per burst.
 */
final class PacketBuildRate
{
    private static final int BURST = 32;
    private static final int WORKERS = 2;
    private static final int TENSOR_FLOATS = 256 * 1024;

    private PacketBuildRate()
    {
    }

    /** Runs in this process (starts its EAL): {@code warmUpSeconds} of warm-up, then {@code seconds} measured. */
    static void run(final PrintWriter out, final int warmUpSeconds, final int seconds, final int cpu, final int lanes)
        throws InterruptedException
    {
        final Eal eal = DpdkEal.start(DpdkEal.noHugeConfig("rate").vdev("net_null0"));
        final MbufPool pool = MbufPool.create("inagg_rate", 16383, 250, MbufPool.DATA_ROOM_DEFAULT, -1);
        final int availableAtStart = pool.availableCount();
        final DpdkTransport transport = DpdkTransport.open(new DpdkTransportConfig().port("net_null0")
            .localMac("02:00:00:00:00:01").localIp("10.0.0.1").peer(DpdkPeer.parse("02:00:00:00:00:02/10.0.0.2:9000"))
            .burst(BURST).maxMessageLength(InaggHeader.messageLength(lanes)).pool(pool));
        final long[] result = new long[6];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread thread = Thread.ofPlatform().name("inagg-dpdk-rate").unstarted(() ->
        {
            try
            {
                eal.pinCurrentThread(cpu);
                loop(transport, lanes, warmUpSeconds * 1_000_000_000L, seconds * 1_000_000_000L, result);
            }
            catch (final Throwable ex)
            {
                failure.set(ex);
            }
            finally
            {
                transport.close();
            }
        });
        thread.start();
        thread.join();
        final int availableAtEnd = pool.availableCount();
        pool.close();
        eal.close();
        if (failure.get() != null)
        {
            throw new IllegalStateException("packet build loop failed: " + failure.get(), failure.get());
        }
        final long packets = result[0];
        final double elapsedS = result[4] / 1e9;
        final int frameBytes = DpdkTransport.HEADERS_LENGTH + InaggHeader.messageLength(lanes);
        out.printf(Locale.ROOT, "inagg packets built and sent over DPDK (net_null0, 1 thread on CPU %d, %d lanes, "
            + "%d-byte frames, bursts of %d), %d s after %d s of warm-up:%n", cpu, lanes, frameBytes, BURST, seconds,
            warmUpSeconds);
        out.printf(Locale.ROOT, "  %-34s %.2f Mpps (%.2f Gb/s of frames, %.1f M lanes/s)%n", "rate",
            packets / elapsedS / 1e6, packets * frameBytes * 8 / elapsedS / 1e9, packets * (double)lanes / elapsedS / 1e6);
        out.printf(Locale.ROOT, "  %-34s %.1f%n", "ns/packet: claim + all headers", (double)result[1] / packets);
        out.printf(Locale.ROOT, "  %-34s %.1f%n", "ns/packet: quantize " + lanes + " lanes", (double)result[2] / packets);
        out.printf(Locale.ROOT, "  %-34s %.1f%n", "ns/packet: tx burst (flush)", (double)result[3] / packets);
        out.printf(Locale.ROOT, "  %-34s %.1f%n", "ns/packet: total", (double)result[4] / packets);
        out.printf(Locale.ROOT, "  %-34s %d%n", "heap bytes allocated (measured)", result[5]);
        out.printf(Locale.ROOT, "  %-34s %s%n", "transport", transport.describeCounters());
        out.printf(Locale.ROOT, "  %-34s start %d, end %d%n", "mbufs free", availableAtStart, availableAtEnd);
        out.flush();
    }

    /**
     * Runs {@code warmUpNs} unmeasured (the JIT compiles the loop, the quantizer's vector code and the transport),
     * then {@code durationNs} measured. result: packets, header ns, quantize ns, flush ns, elapsed ns, heap bytes
     * allocated by this thread while measured.
     */
    private static void loop(
        final DpdkTransport transport, final int lanes, final long warmUpNs, final long durationNs, final long[] result)
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final FixedPointConverter converter = FixedPointConverter.best();
        final int blocks = TENSOR_FLOATS / lanes;
        final int[] shift = new int[blocks];
        final long[] offsets = new long[BURST];
        final int length = InaggHeader.messageLength(lanes);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment tensor = arena.allocate(ValueLayout.JAVA_FLOAT, TENSOR_FLOATS);
            final SplittableRandom random = new SplittableRandom(1);
            for (int i = 0; i < TENSOR_FLOATS; i++)
            {
                tensor.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float)random.nextGaussian());
            }
            for (int b = 0; b < blocks; b++)
            {
                shift[b] = FixedPoint.shift(converter.blockExponent(tensor, (long)b * lanes * Float.BYTES, lanes),
                    WORKERS);
            }
            final MemorySegment m = transport.txMemory();
            long packets = 0;
            long headerNs = 0;
            long quantizeNs = 0;
            long flushNs = 0;
            int block = 0;
            int sequence = 0;
            long start = System.nanoTime();
            long t0 = start;
            long allocatedBefore = 0;
            boolean warm = false;
            while (!warm || t0 - start < durationNs)
            {
                if (!warm && t0 - start >= warmUpNs)
                {
                    warm = true;
                    packets = 0;
                    headerNs = 0;
                    quantizeNs = 0;
                    flushNs = 0;
                    start = t0;
                    allocatedBefore = threads.getCurrentThreadAllocatedBytes();
                }
                int claimed = 0;
                for (int i = 0; i < BURST; i++)
                {
                    final long offset = transport.claim(0, length);
                    if (offset == Transport.CLAIM_FAILED)
                    {
                        break;
                    }
                    InaggHeader.write(m, offset, MessageType.AGGREGATE, 0, 1, 0, (sequence + i) & 127, 0,
                        sequence + i, lanes, 0, InaggHeader.NO_EXPONENT, 0);
                    transport.commit();
                    offsets[claimed++] = offset;
                }
                final long t1 = System.nanoTime();
                for (int i = 0; i < claimed; i++)
                {
                    converter.quantize(tensor, (long)block * lanes * Float.BYTES, lanes, shift[block], m,
                        offsets[i] + InaggHeader.PAYLOAD_OFFSET);
                    block = block + 1 == blocks ? 0 : block + 1;
                }
                final long t2 = System.nanoTime();
                transport.flush();
                final long t3 = System.nanoTime();
                headerNs += t1 - t0;
                quantizeNs += t2 - t1;
                flushNs += t3 - t2;
                packets += claimed;
                sequence += claimed;
                t0 = t3;
            }
            result[0] = packets;
            result[1] = headerNs;
            result[2] = quantizeNs;
            result[3] = flushNs;
            result[4] = t0 - start;
            result[5] = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;
        }
    }
}
