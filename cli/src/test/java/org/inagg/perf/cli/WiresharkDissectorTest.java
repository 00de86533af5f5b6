package org.inagg.perf.cli;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.inagg.ffi.dpdk.NativeLibraryLoader;
import org.inagg.p4.esa.EsaWire;
import org.inagg.perf.cluster.ClusterOptions;
import org.inagg.perf.cluster.LocalCluster;
import org.inagg.perf.cluster.TransportKind;
import org.inagg.services.cli.SyntheticGradients;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.capture.PcapReader;
import org.inagg.transport.capture.PcapWriter;
import org.inagg.transport.capture.SyntheticFrameHeaders;
import org.inagg.transport.frame.UdpFrameCodec;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.RejectReason;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The capture ({@code --pcap}, {@code PcapTransport}) and the Wireshark dissector ({@code tools/wireshark/inagg.lua})
 * against each other through the real tshark: every frame of real all-reduces decodes to the fields that
 * {@link InaggHeader} reads from the same bytes, and every malformed packet is flagged.
 * <p>
 * Needs tshark (Debian's {@code tshark} package); without it the tests skip with the reason, unless
 * {@code -Dinagg.tshark.tests.require=true} (CI), where they fail.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class WiresharkDissectorTest
{
    /** tshark's PI_MALFORMED, as {@code _ws.expert.group} prints it. */
    private static final String PI_MALFORMED = Integer.toString(0x0700_0000);
    private static final List<String> FIELDS = List.of("frame.number", "ip.src", "ip.dst", "ip.checksum.status",
        "udp.srcport",
        "udp.dstport", "frame.protocols", "inagg.version", "inagg.type", "inagg.flags", "inagg.flags.result",
        "inagg.flags.retransmit", "inagg.flags.int32", "inagg.job", "inagg.worker", "inagg.copy", "inagg.slot",
        "inagg.seq", "inagg.count", "inagg.block_exponent", "inagg.next_exponent", "inagg.priority", "inagg.status",
        "inagg.reserved", "inagg.lane", "inagg.join.workers", "inagg.ack.workers", "inagg.ack.slots",
        "inagg.ack.lanes", "inagg.reject.reason", "inagg.esa.reason", "inagg.partial.bitmap_words", "inagg.partial.lanes", "inagg.partial.bitmap_word", "inagg.partial.worker",
        "inagg.partial.owner",
        "inagg.session", "inagg.join.incarnation", "inagg.reject.rejoined_worker", "inagg.join.credential",
        "_ws.expert.message", "_ws.expert.group");

    private static Path dissector;

    @TempDir
    Path dir;

    private final CliProcesses processes = new CliProcesses();

    @BeforeAll
    static void findTshark() throws Exception
    {
        dissector = findDissector();
        String reason = null;
        try
        {
            final Process version = new ProcessBuilder("tshark", "--version").redirectErrorStream(true).start();
            final String output = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!version.waitFor(60, TimeUnit.SECONDS) || version.exitValue() != 0)
            {
                reason = "tshark --version failed: " + output;
            }
        }
        catch (final IOException ex)
        {
            reason = "tshark is not installed (" + ex.getMessage() + "); apt-get install tshark";
        }
        if (reason != null)
        {
            if (Boolean.getBoolean("inagg.tshark.tests.require"))
            {
                Assertions.fail("tshark is required here (-Dinagg.tshark.tests.require=true) but " + reason);
            }
            System.err.println("[inagg-perf] skipping the Wireshark dissector tests: " + reason);
            Assumptions.abort(reason);
        }
    }

    private static Path findDissector()
    {
        for (Path at = Path.of("").toAbsolutePath(); at != null; at = at.getParent())
        {
            final Path lua = at.resolve("tools/wireshark/inagg.lua");
            if (Files.isRegularFile(lua))
            {
                return lua;
            }
        }
        throw new IllegalStateException("tools/wireshark/inagg.lua not found above " + Path.of("").toAbsolutePath());
    }

    @AfterEach
    void tearDown() throws Exception
    {
        processes.close();
    }

    /** Runs tshark with the dissector on {@code pcap} and returns one map of {@link #FIELDS} per frame. */
    private List<Map<String, String>> tshark(final Path pcap, final String... options) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("tshark", "-n", "-X",
            "lua_script:" + dissector, "-r", pcap.toString()));
        command.addAll(List.of(options));
        command.addAll(List.of("-o", "ip.check_checksum:TRUE", "-T", "fields", "-E", "header=n", "-E", "separator=/t", "-E", "occurrence=a", "-E",
            "aggregator=,"));
        for (final String field : FIELDS)
        {
            command.add("-e");
            command.add(field);
        }
        final Path errors = dir.resolve("tshark-" + System.nanoTime() + ".err");
        final Process process = new ProcessBuilder(command).redirectError(errors.toFile()).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("tshark %s: %s", command, Files.readString(errors)).isZero();
        final String stderr = Files.readString(errors);
        assertThat(stderr).as("tshark's complaints about the dissector").doesNotContain("Lua").doesNotContain("lua");
        final List<Map<String, String>> rows = new ArrayList<>();
        for (final String line : output.split("\n"))
        {
            if (line.isEmpty())
            {
                continue;
            }
            final String[] values = line.split("\t", -1);
            assertThat(values).as("tshark line %s", line).hasSize(FIELDS.size());
            final Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < values.length; i++)
            {
                row.put(FIELDS.get(i), normalize(values[i]));
            }
            rows.add(row);
        }
        return rows;
    }

    /** Booleans print as 1/0 in tshark 4.0 and True/False in later versions. */
    private static String normalize(final String value)
    {
        return switch (value)
        {
            case "True" -> "1";
            case "False" -> "0";
            default -> value;
        };
    }

    /** What the dissector must show for a well-formed message, read with {@link InaggHeader} and {@link EsaWire}. */
    private static Map<String, String> expected(final byte[] frame, final int at)
    {
        final MemorySegment m = MemorySegment.ofArray(frame);
        final Map<String, String> fields = new LinkedHashMap<>();
        final int type = InaggHeader.type(m, at);
        final int flags = InaggHeader.flags(m, at);
        fields.put("inagg.version", Integer.toString(InaggHeader.version(m, at)));
        fields.put("inagg.type", Integer.toString(type));
        fields.put("inagg.flags", String.format("0x%02x", flags));
        fields.put("inagg.flags.result", (flags & InaggHeader.FLAG_RESULT) != 0 ? "1" : "0");
        fields.put("inagg.flags.retransmit", (flags & InaggHeader.FLAG_RETRANSMIT) != 0 ? "1" : "0");
        fields.put("inagg.flags.int32", (flags & InaggHeader.FLAG_INT32) != 0 ? "1" : "0");
        fields.put("inagg.job", Integer.toString(InaggHeader.jobId(m, at)));
        fields.put("inagg.worker", Integer.toString(InaggHeader.workerId(m, at)));
        fields.put("inagg.copy", Integer.toString(InaggHeader.shadowCopy(m, at)));
        fields.put("inagg.slot", Integer.toString(InaggHeader.slotIndex(m, at)));
        fields.put("inagg.seq", Integer.toUnsignedString(InaggHeader.sequence(m, at)));
        fields.put("inagg.count", Integer.toString(InaggHeader.elementCount(m, at)));
        fields.put("inagg.block_exponent", Integer.toString(InaggHeader.blockExponent(m, at)));
        fields.put("inagg.next_exponent", Integer.toString(InaggHeader.nextExponent(m, at)));
        fields.put("inagg.priority", Integer.toString(InaggHeader.priority(m, at)));
        fields.put("inagg.status", Integer.toString(InaggHeader.status(m, at)));
        fields.put("inagg.reserved", Integer.toString(InaggHeader.joinLanes(m, at)));
        final int lanes = type == EsaWire.TYPE_PARTIAL ? EsaWire.partialLanes(m, at) : InaggHeader.elementCount(m, at);
        final List<String> values = new ArrayList<>();
        for (int i = 0; i < lanes; i++)
        {
            values.add(Integer.toString(InaggHeader.element(m, at, i)));
        }
        fields.put("inagg.lane", String.join(",", values));
        switch (type)
        {
            case MessageType.AGGREGATE -> fields.put("inagg.session", Integer.toString(InaggHeader.session(m, at)));
            case MessageType.JOIN ->
            {
                fields.put("inagg.join.workers", Integer.toUnsignedString(InaggHeader.sequence(m, at)));
                fields.put("inagg.session", Integer.toString(InaggHeader.session(m, at)));
                fields.put("inagg.join.incarnation", String.format("0x%08x", InaggHeader.joinIncarnation(m, at)));
                if (InaggHeader.elementCount(m, at) == InaggHeader.JOIN_CREDENTIAL_LANES)
                {
                    fields.put("inagg.join.credential", String.format("0x%016x", InaggHeader.joinCredential(m, at)));
                }
            }
            case MessageType.JOIN_ACK ->
            {
                fields.put("inagg.ack.workers", Integer.toUnsignedString(InaggHeader.sequence(m, at)));
                fields.put("inagg.ack.slots", Integer.toString(InaggHeader.slotIndex(m, at)));
                fields.put("inagg.ack.lanes", Integer.toString(InaggHeader.joinLanes(m, at)));
                fields.put("inagg.session", Integer.toString(InaggHeader.joinAckSession(m, at)));
            }
            case MessageType.REJECT ->
            {
                fields.put("inagg.reject.reason", Integer.toString(InaggHeader.status(m, at)));
                fields.put("inagg.session", Integer.toString(InaggHeader.session(m, at)));
                if (InaggHeader.status(m, at) == RejectReason.STALE_SESSION)
                {
                    fields.put("inagg.reject.rejoined_worker", Integer.toString(InaggHeader.sequence(m, at)));
                }
            }
            case EsaWire.TYPE_PARTIAL ->
            {
                fields.put("inagg.esa.reason", Integer.toString(InaggHeader.status(m, at)));
                fields.put("inagg.session", Integer.toString(InaggHeader.session(m, at)));
                fields.put("inagg.partial.bitmap_words", Integer.toString(EsaWire.partialBitmapWords(m, at)));
                fields.put("inagg.partial.lanes", Integer.toString(lanes));
                final List<String> words = new ArrayList<>();
                final List<String> workers = new ArrayList<>();
                for (int k = 0; k < EsaWire.partialBitmapWords(m, at); k++)
                {
                    words.add(String.format("0x%08x", EsaWire.partialBitmapWord(m, at, k)));
                    for (int b = 0; b < 32; b++)
                    {
                        if (EsaWire.partialHasWorker(m, at, 32 * k + b))
                        {
                            workers.add(Integer.toString(32 * k + b));
                        }
                    }
                }
                fields.put("inagg.partial.bitmap_word", String.join(",", words));
                fields.put("inagg.partial.worker", String.join(",", workers));
                fields.put("inagg.partial.owner", InaggHeader.collective(m, at) == InaggHeader.COLLECTIVE_ALL_REDUCE ? ""
                    : Integer.toString(EsaWire.partialOwner(m, at)));
            }
            default ->
            {
                if (InaggHeader.status(m, at) != 0)
                {
                    fields.put("inagg.esa.reason", Integer.toString(InaggHeader.status(m, at)));
                }
            }
        }
        return fields;
    }

    /** Every frame of {@code pcap} decodes as inagg, as InaggHeader reads it, with no malformed flag. */
    private List<Map<String, String>> assertDecodedAsInaggHeaderReadsIt(final Path pcap, final String... options)
        throws Exception
    {
        final List<PcapReader.Record> records = PcapReader.read(pcap).records();
        final List<Map<String, String>> rows = tshark(pcap, options);
        assertThat(rows).as("one tshark row per frame of %s", pcap).hasSize(records.size());
        for (int i = 0; i < records.size(); i++)
        {
            final Map<String, String> row = rows.get(i);
            final byte[] frame = records.get(i).frame();
            assertThat(row.get("frame.protocols")).as("frame %d", i + 1).endsWith(":udp:inagg");
            assertThat(row.get("ip.checksum.status")).as("frame %d IPv4 header checksum good", i + 1).isEqualTo("1");
            assertThat(row.get("_ws.expert.group")).as("frame %d flagged: %s", i + 1, row.get("_ws.expert.message"))
                .doesNotContain(PI_MALFORMED);
            final int udpLength = ((frame[38] & 0xFF) << 8) | (frame[39] & 0xFF);
            assertThat(udpLength - 8).as("frame %d UDP length", i + 1).isEqualTo(frame.length - 42);
            for (final Map.Entry<String, String> field : expected(frame, 42).entrySet())
            {
                assertThat(row.get(field.getKey())).as("frame %d of %s: %s", i + 1, pcap.getFileName(), field.getKey())
                    .isEqualTo(field.getValue());
            }
        }
        return rows;
    }

    private static Set<String> values(final List<Map<String, String>> rows, final String field)
    {
        final Set<String> values = new HashSet<>();
        rows.forEach(row -> values.add(row.get(field)));
        return values;
    }

    @Test
    void shouldDecodeEveryFrameOfAnInProcessAllReduceWithLossAsInaggHeaderReadsIt() throws Exception
    {
        final Path pcap = dir.resolve("inproc.pcap");
        final int workers = 3;
        final int elements = 3000;
        final ClusterOptions options = ClusterOptions.defaults(workers).withLanes(64).withSlots(16)
            .withFaults(FaultConfig.lossy(0.05, 11));
        final float[][] floats = new float[workers][elements];
        final int[][] ints = new int[workers][elements];
        for (int w = 0; w < workers; w++)
        {
            SyntheticGradients.fill(floats[w], w, 0, 5);
            SyntheticGradients.fillInts(ints[w], w, 0, 5);
        }
        try (LocalCluster cluster = LocalCluster.start(options, PcapWriter.open(pcap, 64L << 20)))
        {
            cluster.allReduce(floats);
            cluster.allReduce(ints);
        }

        final List<Map<String, String>> rows = assertDecodedAsInaggHeaderReadsIt(pcap);
        assertThat(values(rows, "inagg.type")).containsExactlyInAnyOrder("1", "2", "3");
        assertThat(values(rows, "inagg.flags.result")).containsExactlyInAnyOrder("0", "1");
        assertThat(values(rows, "inagg.flags.retransmit")).as("5% loss retransmits").contains("1");
        assertThat(values(rows, "inagg.flags.int32")).containsExactlyInAnyOrder("0", "1");
        assertThat(values(rows, "udp.srcport")).containsExactly("47000");
        // Switch 10.0.0.1, worker w 10.0.0.(w + 2): both directions of every worker.
        assertThat(values(rows, "ip.src")).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4");
        assertThat(values(rows, "ip.dst")).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4");
    }

    @Test
    void shouldDecodeTwoLevelUdpTrafficOfCliProcessesWithPartialsOnTheirRealAddresses() throws Exception
    {
        final int base = 20_000 + (int)(ProcessHandle.current().pid() % 20_000) + 50;
        final String ps = "127.0.0.1:" + base;
        final String sw = "127.0.0.1:" + (base + 1);
        final String[] workerAt = {"127.0.0.1:" + (base + 10), "127.0.0.1:" + (base + 11)};
        final String job = "1:2:16:64";
        final Path psLog = dir.resolve("ps.log");
        final Path swLog = dir.resolve("switch.log");
        final Process psProcess = processes.start(psLog, List.of(), "ps", "--bind", ps, "--job", job, "--workers-at",
            String.join(",", workerAt), "--stats-interval", "0", "--duration", "200", "--loss", "0.02",
            "--pcap", dir.resolve("ps.pcap").toString());
        final Process swProcess = processes.start(swLog, List.of(), "switch", "--bind", sw, "--open", "--job", job,
            "--upstream", ps, "--local-workers", "0", "--stats-interval", "0", "--duration", "200",
            "--pcap", dir.resolve("switch.pcap").toString());
        CliProcesses.awaitLine(psProcess, psLog, "inagg ps listening", 60);
        CliProcesses.awaitLine(swProcess, swLog, "inagg switch listening", 60);
        final List<Process> workers = new ArrayList<>();
        for (int w = 0; w < 2; w++)
        {
            workers.add(processes.start(dir.resolve("worker" + w + ".log"), List.of(), "worker", "--switch",
                w == 0 ? sw : ps, "--bind", workerAt[w], "--worker-id", Integer.toString(w), "-w", "2", "-n", "2000",
                "-i", "2", "--no-progress", "--peer-timeout-ms", "30000",
                "--pcap", dir.resolve("worker" + w + ".pcap").toString()));
        }
        for (int w = 0; w < 2; w++)
        {
            final String log = CliProcesses.await(workers.get(w), dir.resolve("worker" + w + ".log"), 180);
            assertThat(workers.get(w).exitValue()).as(log).isZero();
            assertThat(log).contains("pcap: ");
        }
        psProcess.destroy(); // SIGTERM: the shutdown hook closes the agent, which flushes the capture
        swProcess.destroy();
        CliProcesses.await(psProcess, psLog, 30);
        CliProcesses.await(swProcess, swLog, 30);

        final String ports = "inagg.ports:" + base + "," + (base + 1);
        final List<Map<String, String>> psRows = assertDecodedAsInaggHeaderReadsIt(dir.resolve("ps.pcap"), "-o",
            ports);
        final List<Map<String, String>> swRows = assertDecodedAsInaggHeaderReadsIt(dir.resolve("switch.pcap"), "-o",
            ports);
        for (int w = 0; w < 2; w++)
        {
            final List<Map<String, String>> rows = assertDecodedAsInaggHeaderReadsIt(
                dir.resolve("worker" + w + ".pcap"), "-o", ports);
            // Worker 0 sends to the switch; the parameter server sends results to every worker, also to worker 0,
            // whose transport knows only the switch (peer -1: captured with the sender's real address).
            assertThat(values(rows, "udp.srcport")).containsExactlyInAnyOrderElementsOf(w == 0
                ? List.of(Integer.toString(base + 10), Integer.toString(base + 1), Integer.toString(base))
                : List.of(Integer.toString(base + 11), Integer.toString(base)));
            assertThat(values(rows, "inagg.type")).contains("2", "3", "1");
        }
        // The switch sends the sums of its worker 0 up as PARTIALs (reason SUBTREE, bitmap = worker 0).
        final List<Map<String, String>> partials = psRows.stream().filter(r -> "5".equals(r.get("inagg.type")))
            .toList();
        assertThat(partials).isNotEmpty();
        assertThat(values(partials, "inagg.esa.reason")).containsExactly(Integer.toString(EsaWire.REASON_SUBTREE));
        assertThat(values(partials, "inagg.partial.worker")).containsExactly("0");
        assertThat(values(partials, "ip.src")).containsExactly("127.0.0.1");
        assertThat(values(partials, "udp.srcport")).containsExactly(Integer.toString(base + 1));
        assertThat(values(swRows, "inagg.type")).contains("5");
    }

    @Test
    void shouldDecodeDpdkFramesOfAnAllReduceAsTheTransportBuiltThem() throws Exception
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
        final Path pcap = dir.resolve("dpdk.pcap");
        final int workers = 2;
        final int[][] ints = new int[workers][1000];
        for (int w = 0; w < workers; w++)
        {
            SyntheticGradients.fillInts(ints[w], w, 0, 9);
        }
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(workers).withLanes(64)
            .withTransport(TransportKind.DPDK), PcapWriter.open(pcap, 64L << 20)))
        {
            cluster.allReduce(ints);
        }
        // DpdkRingNetwork: the switch is 10.0.0.1:9000 (one of the dissector's default ports).
        final List<Map<String, String>> rows = assertDecodedAsInaggHeaderReadsIt(pcap);
        assertThat(values(rows, "ip.src")).contains("10.0.0.1").hasSize(workers + 1);
        assertThat(values(rows, "inagg.flags.int32")).contains("1");
    }

    /** A hand-made message and what the dissector must say about it: null when well formed. */
    private record Case(String name, byte[] message, String malformed)
    {
    }

    private static byte[] header(final int type, final int flags, final int lanes, final int payloadWords)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH + 4 * payloadWords];
        InaggHeader.write(MemorySegment.ofArray(bytes), 0, type, flags, 513, 7, 32767, 1, -1, lanes, -9,
            InaggHeader.NO_EXPONENT, 255);
        for (int i = 0; i < payloadWords; i++)
        {
            InaggHeader.setElement(MemorySegment.ofArray(bytes), 0, i, i % 2 == 0 ? -i : Integer.MAX_VALUE - i);
        }
        return bytes;
    }

    private static List<Case> handMade()
    {
        final List<Case> cases = new ArrayList<>();
        cases.add(new Case("aggregate", header(MessageType.AGGREGATE, InaggHeader.FLAG_RETRANSMIT, 6, 6), null));
        cases.add(new Case("int32 result", header(MessageType.AGGREGATE,
            InaggHeader.FLAG_RESULT | InaggHeader.FLAG_INT32, 3, 3), null));
        final byte[] raw = header(MessageType.AGGREGATE, 0, 2, 2);
        InaggHeader.setStatus(MemorySegment.ofArray(raw), 0, EsaWire.REASON_COLLISION);
        cases.add(new Case("raw to the parameter server", raw, null));
        final byte[] join = new byte[InaggHeader.LENGTH];
        InaggHeader.write(MemorySegment.ofArray(join), 0, MessageType.JOIN, 0, 3, 2, 0, 0, 4, 0, 0,
            InaggHeader.NO_EXPONENT, 0);
        cases.add(new Case("join", join, null));
        final byte[] ack = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoinAck(MemorySegment.ofArray(ack), 0, 3, 2, 128, 4, 363, 517);
        cases.add(new Case("join ack", ack, null));
        for (final int reason : new int[] {RejectReason.UNKNOWN_JOB, RejectReason.WORKER_ID_OUT_OF_RANGE,
            RejectReason.WORKER_COUNT_MISMATCH, RejectReason.UNSUPPORTED_COLLECTIVE})
        {
            final byte[] reject = new byte[InaggHeader.LENGTH];
            InaggHeader.writeReject(MemorySegment.ofArray(reject), 0, 3, 9, reason);
            cases.add(new Case("reject " + reason, reject, null));
        }
        final int lanes = 5;
        final int workers = 40;
        final byte[] partial = new byte[EsaWire.partialLength(lanes, workers)];
        final MemorySegment p = MemorySegment.ofArray(partial);
        EsaWire.writePartialHeader(p, 0, InaggHeader.FLAG_INT32, 4, 517, 1 << 15 | 12, 77, lanes,
            EsaWire.bitmapWords(workers), 0, InaggHeader.NO_EXPONENT, 6, EsaWire.REASON_PREEMPTED);
        for (int i = 0; i < lanes; i++)
        {
            InaggHeader.setElement(p, 0, i, 1000 * i - 2);
        }
        EsaWire.setPartialBitmapWord(p, 0, lanes, 0, 0b1011);
        EsaWire.setPartialBitmapWord(p, 0, lanes, 1, 0x80);
        cases.add(new Case("partial", partial, null));
        final byte[] scatter = new byte[EsaWire.partialLength(2, 3, InaggHeader.COLLECTIVE_REDUCE_SCATTER)];
        final MemorySegment rs = MemorySegment.ofArray(scatter);
        EsaWire.writePartialHeader(rs, 0, InaggHeader.FLAG_INT32
            | InaggHeader.collectiveFlags(InaggHeader.COLLECTIVE_REDUCE_SCATTER, InaggHeader.OP_MAX), 4, 517, 3, 78, 2,
            1, 0, InaggHeader.NO_EXPONENT, 0, EsaWire.REASON_SUBTREE);
        InaggHeader.setElement(rs, 0, 0, -7);
        InaggHeader.setElement(rs, 0, 1, 9);
        EsaWire.setPartialBitmapWord(rs, 0, 2, 0, 0b011);
        EsaWire.setPartialOwner(rs, 0, 2);
        cases.add(new Case("reduce-scatter partial", scatter, null));

        cases.add(new Case("truncated header", java.util.Arrays.copyOf(header(MessageType.AGGREGATE, 0, 0, 0), 13),
            "Truncated inagg header: 13 bytes"));
        final byte[] version = header(MessageType.AGGREGATE, 0, 2, 2);
        version[0] = (byte)0x21;
        cases.add(new Case("wrong version", version, "Unknown inagg version 2"));
        cases.add(new Case("trailing bytes", header(MessageType.AGGREGATE, 0, 2, 4),
            "UDP payload is 36 bytes but 20 + 4 x Element Count (2) = 28"));
        cases.add(new Case("count past the frame", header(MessageType.AGGREGATE, 0, 300, 3),
            "Element Count 300 reaches past the end of the frame"));
        final byte[] type = header(MessageType.AGGREGATE, 0, 1, 1);
        type[0] = (byte)0x1C;
        cases.add(new Case("unknown type", type, "Unknown inagg message type 12"));
        final byte[] bitmap = header(EsaWire.TYPE_PARTIAL, 0, 2, 2);
        EsaWire.setPartialBitmapWords(MemorySegment.ofArray(bitmap), 0, 3);
        cases.add(new Case("partial bitmap past its count", bitmap, "3 bitmap words but Element Count is 2"));
        // sessions (docs/sessions.md)
        final byte[] sessionJoin = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoin(MemorySegment.ofArray(sessionJoin), 0, 3, 1, 4, 517, 0xC0FFEE42L);
        cases.add(new Case("join asking for a session", sessionJoin, null));
        final byte[] credentialJoin = new byte[InaggHeader.joinLength(0xFEDC_BA98_7654_3210L)];
        InaggHeader.writeJoin(MemorySegment.ofArray(credentialJoin), 0, 3, 1, 4, 0, 0xC0FFEE42L,
            0xFEDC_BA98_7654_3210L);
        cases.add(new Case("join showing a credential", credentialJoin, null));
        final byte[] stale = new byte[InaggHeader.LENGTH];
        InaggHeader.writeReject(MemorySegment.ofArray(stale), 0, 3, 0, RejectReason.STALE_SESSION, 6, 2);
        cases.add(new Case("reject stale session", stale, null));
        final byte[] staleControl = new byte[InaggHeader.LENGTH];
        InaggHeader.writeReject(MemorySegment.ofArray(staleControl), 0, 3, 1, RejectReason.STALE_SESSION, 7,
            InaggHeader.SESSION_CAUSE_CONTROL_PLANE);
        cases.add(new Case("reject stale session from the control plane", staleControl, null));
        final byte[] sessionAggregate = header(MessageType.AGGREGATE, 0, 2, 2);
        InaggHeader.setSession(MemorySegment.ofArray(sessionAggregate), 0, 40000);
        cases.add(new Case("aggregate of session 40000", sessionAggregate, null));
        return cases;
    }

    private static void writeFrames(final Path pcap, final List<byte[]> messages, final int port) throws IOException
    {
        try (PcapWriter writer = PcapWriter.open(pcap, 1 << 20))
        {
            for (final byte[] message : messages)
            {
                final long at = writer.claim(42 + message.length);
                UdpFrameCodec.write(writer.buffer(), at, SyntheticFrameHeaders.macOf(0x0A00_0002),
                    0x0A00_0002, 40_000, SyntheticFrameHeaders.macOf(0x0A00_0001), 0x0A00_0001, port, message.length);
                MemorySegment.copy(MemorySegment.ofArray(message), 0, writer.buffer(), at + 42, message.length);
                writer.commit();
            }
        }
    }

    @Test
    void shouldDecodeEveryMessageTypeAndFlagEachMalformedPacket() throws Exception
    {
        final List<Case> cases = handMade();
        final Path pcap = dir.resolve("handmade.pcap");
        writeFrames(pcap, cases.stream().map(Case::message).toList(), 47000);
        final List<Map<String, String>> rows = tshark(pcap);
        assertThat(rows).hasSize(cases.size());
        for (int i = 0; i < cases.size(); i++)
        {
            final Case c = cases.get(i);
            final Map<String, String> row = rows.get(i);
            assertThat(row.get("frame.protocols")).as(c.name()).endsWith(":udp:inagg");
            if (c.malformed() == null)
            {
                assertThat(row.get("_ws.expert.group")).as("%s flagged: %s", c.name(), row.get("_ws.expert.message"))
                    .doesNotContain(PI_MALFORMED);
                final byte[] frame = new byte[42 + c.message().length];
                System.arraycopy(c.message(), 0, frame, 42, c.message().length);
                for (final Map.Entry<String, String> field : expected(frame, 42).entrySet())
                {
                    assertThat(row.get(field.getKey())).as("%s: %s", c.name(), field.getKey())
                        .isEqualTo(field.getValue());
                }
            }
            else
            {
                assertThat(row.get("_ws.expert.group")).as(c.name()).contains(PI_MALFORMED);
                assertThat(row.get("_ws.expert.message")).as(c.name()).contains(c.malformed());
            }
        }
        final Map<String, String> aggregate = rows.get(0);
        assertThat(aggregate.get("inagg.block_exponent")).isEqualTo("-9");
        assertThat(aggregate.get("inagg.next_exponent")).isEqualTo("-128");
        assertThat(aggregate.get("inagg.seq")).isEqualTo("4294967295");
        assertThat(aggregate.get("inagg.slot")).isEqualTo("32767");
        assertThat(aggregate.get("inagg.copy")).isEqualTo("1");
        assertThat(aggregate.get("_ws.expert.message")).contains("Retransmission of job 513 slot 32767");
        assertThat(rows.get(7).get("_ws.expert.message")).contains("rejected: WORKER_COUNT_MISMATCH");
        assertThat(rows.get(8).get("_ws.expert.message")).contains("rejected: UNSUPPORTED_COLLECTIVE");
        assertThat(rows.get(9).get("inagg.partial.worker")).isEqualTo("0,1,3,39");
        assertThat(rows.get(10).get("inagg.partial.owner")).isEqualTo("2");
        assertThat(rows.get(10).get("inagg.partial.lanes")).isEqualTo("2");
        // The count past the frame is also a length mismatch.
        assertThat(rows.get(14).get("_ws.expert.message")).contains("UDP payload is 32 bytes but");
    }

    @Test
    void shouldDecodeOtherPortsThroughThePortPreferenceDecodeAsAndTheHeuristic() throws Exception
    {
        final Path wellFormed = dir.resolve("heuristic.pcap");
        writeFrames(wellFormed, List.of(header(MessageType.AGGREGATE, 0, 2, 2)), 5556);
        assertThat(tshark(wellFormed, "-o", "udp.try_heuristic_first:TRUE").get(0).get("inagg.count"))
            .as("the heuristic takes a well-formed message on any port").isEqualTo("2");

        final Path malformed = dir.resolve("port5555.pcap");
        writeFrames(malformed, List.of(header(MessageType.AGGREGATE, 0, 9, 2)), 5555);
        assertThat(tshark(malformed, "-o", "udp.try_heuristic_first:TRUE").get(0).get("frame.protocols"))
            .as("the heuristic leaves malformed messages alone").doesNotContain("inagg");
        assertThat(tshark(malformed, "-o", "inagg.ports:5555").get(0).get("_ws.expert.message"))
            .contains("Element Count 9 reaches past the end of the frame");
        assertThat(tshark(malformed, "-d", "udp.port==5555,inagg").get(0).get("inagg.count")).isEqualTo("9");
    }
}
