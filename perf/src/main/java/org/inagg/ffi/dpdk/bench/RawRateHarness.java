package org.inagg.ffi.dpdk.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.EalConfig;
import org.inagg.ffi.dpdk.EthPort;
import org.inagg.ffi.dpdk.FastPath;
import org.inagg.ffi.dpdk.Mbuf;
import org.inagg.ffi.dpdk.MbufPool;

/**
 * Measures raw packet rates of the Java fast path against dpdk-testpmd on the same virtual device and cores.
 *
 * <p>Both sides get two {@code net_null} ports, one polling core ({@code --cpu}, default the last CPU) plus the main
 * lcore 0, bursts of 32, 16384 mbufs with a 250-mbuf per-lcore cache, 1024 descriptors, and
 * {@code --no-huge -m 512 --no-pci}. Modes, as testpmd's:
 * <ul>
 *   <li>{@code io}: receive a burst on one port, send it on the other (0→1 and 1→0), free what is not sent;</li>
 *   <li>{@code txonly}: take a burst from the pool ({@code rte_mempool_get_bulk}, as testpmd), set each mbuf's
 *       headroom, lengths and flags and write a 42-byte Ethernet/IPv4/UDP header into it in one pass, send;</li>
 *   <li>{@code rxonly}: receive a burst, free it.</li>
 * </ul>
 * Rates are transmitted (io, txonly) or received (rxonly) packets per second summed over both ports, sampled every
 * second; the first sample (warm-up) is dropped and the rest averaged. testpmd's figures come from its own
 * {@code --stats-period 1} "Tx-pps"/"Rx-pps" lines, treated the same way. With {@code --rounds N} Java and testpmd
 * alternate N times per mode and the table shows the median of the rounds.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp inagg-ffi-bindings.jar org.inagg.ffi.dpdk.bench.RawRateHarness \
 *     [--seconds 6] [--cpu 1] [--modes io,txonly,rxonly] [--testpmd dpdk-testpmd] [--no-testpmd] [--rounds 1]
 * </pre>
 */
public final class RawRateHarness
{
    private static final int BURST = 32;
    private static final int MBUFS = 16384;
    private static final int CACHE = 250;
    private static final int DESCRIPTORS = 1024;
    private static final int TX_LENGTH = 64;
    private static final int HEADER_LENGTH = 42;
    private static final List<String> EAL_COMMON = List.of("--no-huge", "-m", "512", "--no-pci");
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    private final int seconds;
    private final int cpu;
    private final List<String> modes;
    private final String testpmd;
    private final int rounds;

    RawRateHarness(final int seconds, final int cpu, final List<String> modes, final String testpmd, final int rounds)
    {
        this.seconds = seconds;
        this.cpu = cpu;
        this.modes = modes;
        this.testpmd = testpmd;
        this.rounds = rounds;
    }

    public static void main(final String[] args) throws Exception
    {
        int seconds = 6;
        int cpu = Runtime.getRuntime().availableProcessors() - 1;
        List<String> modes = List.of("io", "txonly", "rxonly");
        String testpmd = "dpdk-testpmd";
        int rounds = 1;
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--cpu" -> cpu = Integer.parseInt(args[++i]);
                case "--modes" -> modes = Arrays.asList(args[++i].split(","));
                case "--testpmd" -> testpmd = args[++i];
                case "--no-testpmd" -> testpmd = null;
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default ->
                {
                    System.err.println("usage: RawRateHarness [--seconds N] [--cpu N] [--modes io,txonly,rxonly] " +
                        "[--testpmd PATH | --no-testpmd] [--rounds N]");
                    System.exit(2);
                }
            }
        }
        if (seconds < 2 || cpu < 1 || rounds < 1)
        {
            throw new IllegalArgumentException("need --seconds >= 2, --rounds >= 1 and --cpu >= 1 (lcore 0 is the main lcore)");
        }
        new RawRateHarness(seconds, cpu, modes, testpmd, rounds).run();
    }

    void run() throws Exception
    {
        final Map<String, List<Double>> java = new LinkedHashMap<>();
        final Map<String, List<Double>> reference = new LinkedHashMap<>();
        final String prefix = "inagg-bench-" + ProcessHandle.current().pid();
        System.out.printf("Java: EAL -l 0 %s --file-prefix %s --vdev net_null0 --vdev net_null1; polling thread " +
            "pinned to CPU %d and registered as an lcore%n", String.join(" ", EAL_COMMON), prefix, cpu);
        try (Eal eal = Eal.init(new EalConfig().lcores("0").noHuge(true).memoryMb(512).noPci(true)
            .filePrefix(prefix).vdev("net_null0").vdev("net_null1")))
        {
            try (MbufPool pool = MbufPool.create("bench_pool", MBUFS, CACHE, MbufPool.DATA_ROOM_DEFAULT, -1))
            {
                final EthPort[] ports = {EthPort.byName("net_null0"), EthPort.byName("net_null1")};
                for (final EthPort port : ports)
                {
                    port.configure(1, 1).setupRxQueue(0, DESCRIPTORS, pool).setupTxQueue(0, DESCRIPTORS).start();
                }
                final int availableAtStart = pool.availableCount();
                // Java and testpmd alternate per mode and round, so that drift in the machine's load hits both.
                for (int round = 0; round < rounds; round++)
                {
                    for (final String mode : modes)
                    {
                        java.computeIfAbsent(mode, k -> new ArrayList<>()).add(measureJava(eal, mode, ports, pool));
                        if (testpmd != null)
                        {
                            reference.computeIfAbsent(mode, k -> new ArrayList<>()).add(measureTestpmd(mode));
                        }
                    }
                }
                for (final EthPort port : ports)
                {
                    port.close();
                }
                System.out.printf("Java: mbufs free before %d, after %d%n", availableAtStart, pool.availableCount());
            }
        }

        System.out.println();
        System.out.printf(Locale.ROOT, "%d round(s) of %d s per mode; median of the rounds' means%n", rounds, seconds);
        System.out.printf(Locale.ROOT, "%-8s %14s %14s %8s%n", "mode", "java Mpps", "testpmd Mpps", "ratio");
        for (final String mode : modes)
        {
            final double j = median(java.get(mode));
            final List<Double> t = reference.get(mode);
            System.out.printf(Locale.ROOT, "%-8s %14.2f %14s %8s%n", mode, j / 1e6,
                t == null ? "-" : String.format(Locale.ROOT, "%.2f", median(t) / 1e6),
                t == null ? "-" : String.format(Locale.ROOT, "%.3f", j / median(t)));
        }
    }

    private static double median(final List<Double> values)
    {
        final double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        final int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private double measureJava(final Eal eal, final String mode, final EthPort[] ports, final MbufPool pool)
        throws InterruptedException
    {
        final AtomicLong packets = new AtomicLong();
        final long[] allocated = new long[1];
        final Thread poller = Thread.ofPlatform().name("inagg-bench-" + mode).unstarted(() ->
        {
            eal.pinCurrentThread(cpu);
            eal.registerCurrentThread();
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment mbufs = arena.allocate(ValueLayout.ADDRESS, BURST);
                final MemorySegment header = arena.allocate(HEADER_LENGTH);
                fillHeader(header);
                final long allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
                switch (mode)
                {
                    case "io" -> io(ports[0].id(), ports[1].id(), mbufs, packets);
                    case "txonly" -> txOnly(ports[0].id(), ports[1].id(), pool.address(), mbufs, header, packets);
                    case "rxonly" -> rxOnly(ports[0].id(), ports[1].id(), mbufs, packets);
                    default -> throw new IllegalArgumentException("mode " + mode);
                }
                allocated[0] = THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore;
            }
            finally
            {
                eal.unregisterCurrentThread();
            }
        });
        poller.start();
        final double rate = sample(packets::get, "java " + mode);
        poller.interrupt();
        poller.join();
        System.out.printf("java %-7s heap bytes allocated by the polling loop (warm-up included): %d%n",
            mode, allocated[0]);
        return rate;
    }

    private double sample(final java.util.function.LongSupplier counter, final String label)
        throws InterruptedException
    {
        final List<Double> rates = new ArrayList<>();
        long lastCount = counter.getAsLong();
        long lastTime = System.nanoTime();
        for (int s = 0; s < seconds; s++)
        {
            Thread.sleep(1000);
            final long count = counter.getAsLong();
            final long now = System.nanoTime();
            rates.add((count - lastCount) * 1e9 / (now - lastTime));
            lastCount = count;
            lastTime = now;
        }
        return report(label, rates);
    }

    private static double report(final String label, final List<Double> rates)
    {
        final List<Double> steady = rates.size() > 1 ? rates.subList(1, rates.size()) : rates;
        final double mean = steady.stream().mapToDouble(Double::doubleValue).average().orElse(0);
        System.out.printf(Locale.ROOT, "%-16s Mpps per second: %s -> mean %.2f (first dropped)%n", label,
            rates.stream().map(r -> String.format(Locale.ROOT, "%.2f", r / 1e6)).toList(), mean / 1e6);
        return mean;
    }

    // The three loops: one burst per port per iteration, like testpmd's streams 0->1 and 1->0 on one lcore.

    private static void io(final int p0, final int p1, final MemorySegment mbufs, final AtomicLong packets)
    {
        long sent = 0;
        final Thread self = Thread.currentThread();
        while (!self.isInterrupted())
        {
            for (int i = 0; i < 64; i++)
            {
                int n = FastPath.rxBurst(p0, 0, mbufs, BURST);
                if (n > 0)
                {
                    sent += FastPath.txBurstFreeUnsent(p1, 0, mbufs, n);
                }
                n = FastPath.rxBurst(p1, 0, mbufs, BURST);
                if (n > 0)
                {
                    sent += FastPath.txBurstFreeUnsent(p0, 0, mbufs, n);
                }
            }
            packets.lazySet(sent);
        }
    }

    private static void txOnly(
        final int p0, final int p1, final MemorySegment pool, final MemorySegment mbufs, final MemorySegment header,
        final AtomicLong packets)
    {
        // The 42-byte header as five 8-byte words and one 2-byte word, written in place into each packet.
        final long h0 = header.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        final long h1 = header.get(ValueLayout.JAVA_LONG_UNALIGNED, 8);
        final long h2 = header.get(ValueLayout.JAVA_LONG_UNALIGNED, 16);
        final long h3 = header.get(ValueLayout.JAVA_LONG_UNALIGNED, 24);
        final long h4 = header.get(ValueLayout.JAVA_LONG_UNALIGNED, 32);
        final short h5 = header.get(ValueLayout.JAVA_SHORT_UNALIGNED, 40);
        long sent = 0;
        final Thread self = Thread.currentThread();
        while (!self.isInterrupted())
        {
            for (int i = 0; i < 64; i++)
            {
                for (int port = 0; port < 2; port++)
                {
                    if (!FastPath.rawBulkAlloc(pool, mbufs, BURST))
                    {
                        continue;
                    }
                    for (int k = 0; k < BURST; k++)
                    {
                        final long d = Mbuf.prepareRaw(Mbuf.at(mbufs, k), TX_LENGTH);
                        final MemorySegment mem = Mbuf.MEMORY;
                        mem.set(ValueLayout.JAVA_LONG_UNALIGNED, d, h0);
                        mem.set(ValueLayout.JAVA_LONG_UNALIGNED, d + 8, h1);
                        mem.set(ValueLayout.JAVA_LONG_UNALIGNED, d + 16, h2);
                        mem.set(ValueLayout.JAVA_LONG_UNALIGNED, d + 24, h3);
                        mem.set(ValueLayout.JAVA_LONG_UNALIGNED, d + 32, h4);
                        mem.set(ValueLayout.JAVA_SHORT_UNALIGNED, d + 40, h5);
                    }
                    sent += FastPath.txBurstFreeUnsent(port == 0 ? p0 : p1, 0, mbufs, BURST);
                }
            }
            packets.lazySet(sent);
        }
    }

    private static void rxOnly(final int p0, final int p1, final MemorySegment mbufs, final AtomicLong packets)
    {
        long received = 0;
        final Thread self = Thread.currentThread();
        while (!self.isInterrupted())
        {
            for (int i = 0; i < 64; i++)
            {
                int n = FastPath.rxBurst(p0, 0, mbufs, BURST);
                FastPath.bulkFree(mbufs, n);
                received += n;
                n = FastPath.rxBurst(p1, 0, mbufs, BURST);
                FastPath.bulkFree(mbufs, n);
                received += n;
            }
            packets.lazySet(received);
        }
    }

    /** Ethernet (broadcast, IPv4) + IPv4 (UDP, TTL 64, 10.0.0.1 → 10.0.0.2) + UDP (9000 → 9000), as txonly sends. */
    private static void fillHeader(final MemorySegment h)
    {
        final byte[] bytes = {
            -1, -1, -1, -1, -1, -1, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
            0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
            0x23, 0x28, 0x23, 0x28, 0, 30, 0, 0};
        MemorySegment.copy(bytes, 0, h, ValueLayout.JAVA_BYTE, 0, HEADER_LENGTH);
    }

    private static final Pattern PPS = Pattern.compile("(Rx|Tx)-pps:\\s+(\\d+)");

    private double measureTestpmd(final String mode) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(testpmd, "-l", "0," + cpu));
        command.addAll(EAL_COMMON);
        command.addAll(List.of("--file-prefix", "inagg-testpmd-" + ProcessHandle.current().pid() + "-" + mode,
            "--vdev", "net_null0", "--vdev", "net_null1", "--",
            "--forward-mode=" + mode, "--nb-cores=1", "--total-num-mbufs=" + MBUFS, "--mbcache=" + CACHE,
            "--burst=" + BURST, "--rxd=" + DESCRIPTORS, "--txd=" + DESCRIPTORS, "--stats-period", "1"));
        if ("txonly".equals(mode))
        {
            command.add("--txpkts=" + TX_LENGTH);
        }
        System.out.println("testpmd: " + String.join(" ", command));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String wanted = "rxonly".equals(mode) ? "Rx" : "Tx";
        final List<Double> rates = new ArrayList<>();
        final StringBuilder log = new StringBuilder();
        final Thread reader = Thread.ofPlatform().start(() ->
        {
            try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                // With --stats-period testpmd prints, per port and period, "Rx-pps: N ... Tx-pps: N"; sum the ports.
                double period = 0;
                int portsSeen = 0;
                String line;
                while ((line = in.readLine()) != null)
                {
                    log.append(line).append('\n');
                    final Matcher m = PPS.matcher(line);
                    while (m.find())
                    {
                        if (m.group(1).equals(wanted))
                        {
                            period += Double.parseDouble(m.group(2));
                            if (++portsSeen == 2)
                            {
                                synchronized (rates)
                                {
                                    rates.add(period);
                                }
                                period = 0;
                                portsSeen = 0;
                            }
                        }
                    }
                }
            }
            catch (final IOException ignore)
            {
                // process ended
            }
        });
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds + 30L);
        while (process.isAlive() && System.nanoTime() - deadline < 0)
        {
            synchronized (rates)
            {
                if (rates.size() >= seconds + 1) // the first period starts before forwarding does
                {
                    break;
                }
            }
            Thread.sleep(50);
        }
        process.destroy(); // SIGTERM: testpmd stops forwarding, closes its ports and exits
        if (!process.waitFor(20, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
        }
        reader.join(5000);
        final List<Double> measured;
        synchronized (rates)
        {
            measured = new ArrayList<>(rates.subList(Math.min(1, rates.size()), rates.size()));
        }
        if (measured.size() < 2)
        {
            throw new IllegalStateException("testpmd " + mode + " gave no rates; its output:\n" + log);
        }
        return report("testpmd " + mode, measured);
    }
}
