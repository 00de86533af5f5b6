package org.inagg.p4.bmv2;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.inagg.p4.control.JobSpec;
import org.inagg.p4.control.JobTable;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.p4.control.WorkerEndpoint;
import org.inagg.p4.softswitch.SwitchCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Traffic through jobs added at run time: the conformance vector {@code multi_job_isolation} (two jobs, one host in
 * both) replayed on a simple_switch whose jobs {@link Bmv2Switch} added over the slots of a removed job, with those
 * slots left dirty (every packet would be dropped if they were not cleared) and multicast node handles other than a
 * fresh switch's. The frames out must be the vector's, byte for byte, and the counters the software switch's.
 * <p>
 * bmv2 runs on pcap files ({@code --use-files}): it replays the input files after a start delay, within which the
 * jobs are configured.
 */
class Bmv2SwitchTrafficTest
{
    private static final SwitchAddress SWITCH = new SwitchAddress(0x0200_0000_00feL, 0x0a00_00fe);
    private static final Path VECTOR = Path.of("src/test/vectors/multi_job_isolation.stf");
    private static final int START_DELAY_SECONDS = 6;
    private static final Duration PROCESSING_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path work;

    /** Host n of the vectors: switch port n, MAC 02:00:00:00:00:0n, 10.0.0.n, UDP 40000 + n. */
    private static WorkerEndpoint host(final int n)
    {
        return new WorkerEndpoint(n - 1, n, 0x0200_0000_0000L + n, 0x0a00_0000 + n, 40000 + n);
    }

    @Test
    void shouldAggregateThroughJobsAddedAtRunTimeOverAnotherJobsSlots() throws IOException, InterruptedException
    {
        final P4Toolchain toolchain = Bmv2TestEnvironment.assumeToolchain();
        final Path json = Bmv2TestEnvironment.v1modelJson();
        final Vector vector = Vector.read(VECTOR);
        final JobSpec job10 = new JobSpec(10, 2, 0, 2, 10, List.of(host(1), host(2), host(3)));
        final JobSpec job11 = new JobSpec(11, 2, 2, 2, 11, List.of(host(2), host(4)));
        assertThat(new JobTable(SWITCH).add(job10).add(job11).simpleSwitchCommands())
            .as("the jobs are the vector's").containsExactlyElementsOf(vector.setup);

        final TreeSet<Integer> ports = new TreeSet<>(vector.expected.keySet());
        vector.packets.forEach(packet -> ports.add(packet.port));
        ports.addAll(List.of(1, 2, 3, 4));
        writeInputs(vector, ports);
        final SimpleSwitchProcess.Context context = new SimpleSwitchProcess.Context()
            .toolchain(toolchain).json(json).workDirectory(work).useFiles(START_DELAY_SECONDS);
        ports.forEach(port -> context.port(port, "pcap" + port));

        final Map<Integer, List<String>> sent = new TreeMap<>();
        final Map<SwitchCounter, Long> counters;
        try (SimpleSwitchProcess simpleSwitch = SimpleSwitchProcess.start(context))
        {
            final long started = System.nanoTime();
            final SimpleSwitchCli cli = simpleSwitch.cli();
            final Bmv2Switch bmv2 = new Bmv2Switch(cli, SWITCH);
            // a job that ran on slots 0..3 and is gone, its registers left as rounds left them
            bmv2.addJob(new JobSpec(5, 4, 0, 2, 5, List.of(host(1), host(2), host(3))));
            dirty(cli, 0, 8);
            bmv2.removeJob(5);
            dirty(cli, 0, 8); // and dirty again: adding a job must clear its slots itself
            bmv2.addJob(job11); // in the other order than the vector: other node handles than a fresh switch's
            bmv2.addJob(job10);
            final Duration setup = Duration.ofNanos(System.nanoTime() - started);
            if (setup.compareTo(Duration.ofSeconds(START_DELAY_SECONDS)) >= 0)
            {
                fail("the setup took " + setup + ", longer than bmv2's start delay of " + START_DELAY_SECONDS
                    + " s: raise START_DELAY_SECONDS");
            }
            counters = awaitProcessed(bmv2, vector.packets.size());
        }
        for (final int port : ports)
        {
            sent.put(port, readFrames(work.resolve("pcap" + port + "_out.pcap")));
        }
        for (final int port : ports)
        {
            assertThat(sent.get(port)).as("frames out of port %d", port)
                .containsExactlyElementsOf(vector.expected.getOrDefault(port, List.of()));
        }
        assertThat(counters).containsEntry(SwitchCounter.RECEIVED, (long)vector.packets.size());
        vector.counters.forEach((name, value) ->
            assertThat(counters).containsEntry(SwitchCounter.valueOf(name), value));
    }

    /** used = 1, count = 0, width = 1 on copies [from, to): every packet of a 2-lane job would be dropped. */
    private static void dirty(final SimpleSwitchCli cli, final int from, final int to)
    {
        final List<String> commands = new ArrayList<>();
        for (int copy = from; copy < to; copy++)
        {
            commands.add("register_write InaggIngress.used_reg " + copy + " 1");
            commands.add("register_write InaggIngress.count_reg " + copy + " 0");
            commands.add("register_write InaggIngress.width_reg " + copy + " 1");
            for (int word = 0; word < 8; word++)
            {
                commands.add("register_write InaggIngress.seen_reg " + (copy * 8 + word) + " 4294967295");
            }
        }
        cli.run(commands);
    }

    /** Waits until bmv2 took every packet and its counters stand still; returns them. */
    private static Map<SwitchCounter, Long> awaitProcessed(final Bmv2Switch bmv2, final int packets)
        throws InterruptedException
    {
        final long deadline = System.nanoTime() + PROCESSING_TIMEOUT.toNanos();
        Map<SwitchCounter, Long> last = Map.of();
        while (System.nanoTime() < deadline)
        {
            final Map<SwitchCounter, Long> counters = bmv2.counters();
            if (counters.get(SwitchCounter.RECEIVED) >= packets && counters.equals(last))
            {
                return counters;
            }
            last = counters;
            Thread.sleep(300);
        }
        fail("bmv2 did not take the " + packets + " packets within " + PROCESSING_TIMEOUT + ": counters " + last);
        return last;
    }

    private void writeInputs(final Vector vector, final TreeSet<Integer> ports) throws IOException
    {
        final Map<Integer, ByteBuffer> files = new TreeMap<>();
        for (final int port : ports)
        {
            final ByteBuffer file = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
            file.putInt(0xA1B2C3D4).putShort((short)2).putShort((short)4).putInt(0).putInt(0).putInt(65535).putInt(1);
            files.put(port, file);
        }
        int n = 0;
        for (final Packet packet : vector.packets)
        {
            final long micros = 1000L * ++n; // file order across ports: bmv2 replays by timestamp
            files.get(packet.port).putInt((int)(micros / 1_000_000)).putInt((int)(micros % 1_000_000))
                .putInt(packet.frame.length).putInt(packet.frame.length).put(packet.frame);
        }
        for (final Map.Entry<Integer, ByteBuffer> file : files.entrySet())
        {
            final ByteBuffer bytes = file.getValue().flip();
            final byte[] content = new byte[bytes.remaining()];
            bytes.get(content);
            Files.write(work.resolve("pcap" + file.getKey() + "_in.pcap"), content);
        }
    }

    private static List<String> readFrames(final Path pcap) throws IOException
    {
        final List<String> frames = new ArrayList<>();
        if (!Files.exists(pcap))
        {
            return frames;
        }
        final ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(pcap)).order(ByteOrder.LITTLE_ENDIAN);
        if (bytes.remaining() < 24)
        {
            return frames;
        }
        bytes.position(24);
        while (bytes.remaining() >= 16)
        {
            bytes.getInt();
            bytes.getInt();
            final int length = bytes.getInt();
            bytes.getInt();
            final byte[] frame = new byte[length];
            bytes.get(frame);
            frames.add(HexFormat.of().withUpperCase().formatHex(frame));
        }
        return frames;
    }

    private record Packet(int port, byte[] frame)
    {
    }

    /** The parts of a conformance vector (p4/src/test/vectors/README.md) this test replays. */
    private record Vector(List<String> setup, List<Packet> packets, Map<Integer, List<String>> expected,
        Map<String, Long> counters)
    {
        static Vector read(final Path file) throws IOException
        {
            final Vector vector = new Vector(new ArrayList<>(), new ArrayList<>(), new TreeMap<>(),
                new LinkedHashMap<>());
            for (final String raw : Files.readAllLines(file))
            {
                final int hash = raw.indexOf('#');
                final String line = (hash >= 0 ? raw.substring(0, hash) : raw).strip();
                if (line.isEmpty())
                {
                    continue;
                }
                final String[] words = line.split("\\s+");
                final String hex = String.join("", List.of(words).subList(Math.min(2, words.length), words.length));
                switch (words[0])
                {
                    case "packet" -> vector.packets.add(new Packet(Integer.parseInt(words[1]), HexFormat.of()
                        .parseHex(hex)));
                    case "expect" -> vector.expected.computeIfAbsent(Integer.parseInt(words[1]),
                        port -> new ArrayList<>()).add(hex.toUpperCase());
                    case "softswitch_counter" -> vector.counters.put(words[1], Long.parseLong(words[2]));
                    default -> vector.setup.add(line);
                }
            }
            return vector;
        }
    }
}
