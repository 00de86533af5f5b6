package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.inagg.perf.DpdkTests;
import org.inagg.perf.cluster.ClusterOptions;
import org.inagg.perf.cluster.LocalCluster;
import org.inagg.perf.cluster.TransportKind;
import org.inagg.services.cli.SyntheticGradients;
import org.inagg.transport.FaultConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole all-reduce jobs over DPDK, checked bit for bit against the same job over in-process rings, with and without
 * injected loss, duplication and reordering, and with every mbuf back in its pool at the end:
 * <ul>
 *   <li>in this process: a {@link LocalCluster} of {@link TransportKind#DPDK}, one net_ring port per link;</li>
 *   <li>a switch process and two worker processes ({@code inagg switch|worker --transport dpdk}) joined by memif;</li>
 *   <li>the same with the workers' sources registered ({@code --source}), while a forger on a third memif link copies
 *       worker 0's IPv4 address and UDP port from another MAC (issue 24);</li>
 *   <li>the same in three network namespaces, each worker joined to the switch's namespace by a veth pair, driven
 *       with net_af_packet (skipped, saying why, where namespaces cannot be made; failed instead with
 *       {@code -Dinagg.root.tests.require=true}, as in CI).</li>
 * </ul>
 * This JVM's EAL is the LocalCluster's; the processes have their own.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DpdkEndToEndTest
{
    private static final String SWITCH_MAC = "02:00:00:00:00:01";
    private static final String SWITCH_IP = "10.0.0.1";
    private static final String EAL_ARGS = "--no-huge -m 256 --no-pci";
    private static final Pattern CRC = Pattern.compile("result crc32\\s+([0-9a-f]{8})");
    private static final Pattern POOL = Pattern.compile("mbufs free at start (\\d+), after close (\\d+)");

    @TempDir
    Path dir;

    private final CliProcesses processes = new CliProcesses();
    private final List<String> namespaces = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception
    {
        processes.close();
        for (final String ns : namespaces)
        {
            run("ip", "netns", "del", ns);
        }
    }

    @Test
    void shouldGiveBitIdenticalSumsOverNetRingPortsInOneProcess()
    {
        DpdkTests.assumeDpdk();
        final int workers = 3;
        for (final int length : new int[] {257, 200_003})
        {
            final float[][] inputs = inputs(workers, length, 11);
            final ClusterOptions base = ClusterOptions.defaults(workers)
                .withTimeouts(Duration.ofMillis(2), Duration.ofSeconds(30));
            final float[][] reference = runLocal(base, inputs);
            assertBitIdentical(runLocal(base.withTransport(TransportKind.DPDK), inputs), reference[0],
                "dpdk lossless, length " + length);
            assertBitIdentical(runLocal(base.withTransport(TransportKind.DPDK).withThreads(2, "backoff")
                .withFaults(new FaultConfig(0.05, 0.05, 0.05, 2_000_000, 7)), inputs), reference[0],
                "dpdk 2 threads with loss, duplication, reordering, length " + length);
        }
    }

    @Test
    void shouldGiveBitIdenticalSumsBetweenSwitchAndWorkerProcessesOverMemif() throws Exception
    {
        DpdkTests.assumeDpdk();
        final int workers = 2;
        final int elements = 300_000;
        final String socket = dir.resolve("memif.sock").toString();
        final List<String> switchArgs = new ArrayList<>(List.of("--open", "--job", "1:" + workers, "--local-mac", SWITCH_MAC,
            "--local-ip", SWITCH_IP));
        for (int w = 0; w < workers; w++)
        {
            switchArgs.addAll(List.of("--vdev", memif("net_memif" + w, "server", w, socket), "--port", "net_memif" + w));
        }
        final List<List<String>> workerArgs = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            workerArgs.add(List.of("--vdev", memif("net_memif0", "client", w, socket), "--port", "net_memif0"));
        }
        runJob(workers, elements, List.of(), switchArgs, w -> List.of(), workerArgs);
    }

    @Test
    void shouldAdmitOnlyRegisteredSourcesFromThePinnedMacWhileAForgerCopiesAWorkersAddressOverMemifAttack()
        throws Exception
    {
        // Issue 24: `switch --transport dpdk --source` registers each worker's ip:port; worker 0's first JOIN pins its
        // MAC; a forger on a third link copies worker 0's address (10.0.1.1:9000) from another MAC and JOINs as worker
        // 0 with a new incarnation: dropped, the job neither restarted nor fed; both workers complete bit-exact.
        DpdkTests.assumeDpdk();
        final int workers = 2;
        final int elements = 200_000;
        final long seed = 5;
        final String socket = dir.resolve("memif.sock").toString();
        final List<String> switchArgs = new ArrayList<>(List.of("switch", "--transport", "dpdk", "--eal-args",
            EAL_ARGS, "--stats-interval", "0", "--duration", "110", "--job", "1:" + workers, "--source",
            "1:0=10.0.1.1:9000,1:1=10.0.1.2:9000", "--local-mac", SWITCH_MAC, "--local-ip", SWITCH_IP));
        for (int link = 0; link < 3; link++)
        {
            switchArgs.addAll(List.of("--vdev", memif("net_memif" + link, "server", link, socket), "--port",
                "net_memif" + link));
        }
        final Path switchLog = dir.resolve("switch.log");
        final Process switchProcess = processes.start(switchLog, List.of(), switchArgs.toArray(String[]::new));
        CliProcesses.awaitLine(switchProcess, switchLog, "inagg switch listening", 60);

        final List<Process> workerProcesses = new ArrayList<>();
        workerProcesses.add(startDpdkWorker(0, 0, mac(1), "10.0.1.1", elements, seed, "60000", "worker0.log"));
        CliProcesses.awaitLine(switchProcess, switchLog, "worker 0/2 joined from dpdk://10.0.1.1:9000", 60);
        final Process forger = startDpdkWorker(2, 0, "02:00:00:00:0e:0e", "10.0.1.1", 1_000, seed, "4000",
            "forger.log");
        CliProcesses.awaitLine(switchProcess, switchLog, "not the worker's registered source", 60);
        workerProcesses.add(startDpdkWorker(1, 1, mac(2), "10.0.1.2", elements, seed, "60000", "worker1.log"));

        final String expected = String.format(Locale.ROOT, "%08x", expectedCrc(workers, elements, seed));
        for (int w = 0; w < workers; w++)
        {
            final String output = CliProcesses.await(workerProcesses.get(w), dir.resolve("worker" + w + ".log"), 90);
            assertThat(workerProcesses.get(w).exitValue()).as(output).isZero();
            final Matcher crc = CRC.matcher(output);
            assertThat(crc.find()).as(output).isTrue();
            assertThat(crc.group(1)).as("worker %d: %s", w, output).isEqualTo(expected);
        }
        final String forgerOutput = CliProcesses.await(forger, dir.resolve("forger.log"), 60);
        assertThat(forger.exitValue()).as("the forger never joins: %s", forgerOutput).isNotZero();
        switchProcess.destroy();
        final String switchOutput = CliProcesses.await(switchProcess, switchLog, 30);
        assertThat(switchOutput).contains("registered sources").contains("02:00:00:00:01:01")
            .contains("worker 1/2 joined from dpdk://10.0.1.2:9000").doesNotContain("open mode")
            .doesNotContain("rejoined")
            .containsPattern("from registered sources' addresses with an unpinned MAC [1-9]");
        assertPoolBack(switchOutput, "switch:\n" + switchOutput);
    }

    private Process startDpdkWorker(final int link, final int workerId, final String mac, final String ip,
        final int elements, final long seed, final String peerTimeoutMs, final String log) throws IOException
    {
        return processes.start(dir.resolve(log), List.of(), "worker", "--transport", "dpdk", "--eal-args", EAL_ARGS,
            "--worker-id", Integer.toString(workerId), "-w", "2", "-n", Integer.toString(elements), "-i", "2",
            "--seed", Long.toString(seed), "--no-progress", "--peer-timeout-ms", peerTimeoutMs, "--local-mac", mac,
            "--local-ip", ip, "--peer", SWITCH_MAC + "/" + SWITCH_IP + ":9000", "--vdev",
            memif("net_memif0", "client", link, dir.resolve("memif.sock").toString()), "--port", "net_memif0");
    }

    @Test
    void shouldGiveBitIdenticalSumsBetweenProcessesInNetworkNamespacesOverAfPacket() throws Exception
    {
        DpdkTests.assumeDpdk();
        final int workers = 2;
        final String tag = "ia" + (ProcessHandle.current().pid() % 100_000);
        final String switchNs = tag + "sw";
        String failure = run("ip", "netns", "add", switchNs);
        if (failure == null)
        {
            namespaces.add(switchNs);
        }
        for (int w = 0; w < workers && failure == null; w++)
        {
            final String ns = tag + "w" + w;
            failure = run("ip", "netns", "add", ns);
            if (failure != null)
            {
                break;
            }
            namespaces.add(ns);
            for (final String[] step : new String[][] {
                {"ip", "link", "add", "vs" + w, "address", mac(0), "netns", switchNs, "type", "veth", "peer", "name",
                    "vw" + w, "address", mac(w + 1), "netns", ns},
                {"ip", "-n", switchNs, "link", "set", "vs" + w, "up"},
                {"ip", "-n", ns, "link", "set", "vw" + w, "up"}})
            {
                failure = failure == null ? run(step) : failure;
            }
        }
        if (failure != null)
        {
            final String why = "cannot set up network namespaces and veth pairs (needs root or CAP_NET_ADMIN, and "
                + "iproute2): " + failure;
            if (Boolean.getBoolean("inagg.root.tests.require"))
            {
                Assertions.fail("root tests are required here (-Dinagg.root.tests.require=true) but " + why);
            }
            System.err.println("[DpdkEndToEndTest] skipping the network-namespace test: " + why);
            Assumptions.abort("skipped: " + why);
        }

        final List<String> switchArgs = new ArrayList<>(List.of("--open", "--job", "1:" + workers, "--local-mac", mac(0),
            "--local-ip", SWITCH_IP));
        final List<List<String>> workerArgs = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            switchArgs.addAll(List.of("--vdev", "net_af_packet" + w + ",iface=vs" + w, "--port", "net_af_packet" + w));
            workerArgs.add(List.of("--vdev", "net_af_packet0,iface=vw" + w, "--port", "net_af_packet0"));
        }
        runJob(workers, 200_000, List.of("ip", "netns", "exec", tag + "sw"), switchArgs,
            w -> List.of("ip", "netns", "exec", tag + "w" + w), workerArgs);
    }

    @Test
    void shouldReportEalFailureWithEalsOwnMessage() throws Exception
    {
        DpdkTests.assumeDpdk();
        final Path log = dir.resolve("bad-eal.log");
        final Process worker = processes.start(log, List.of(), "worker", "--transport", "dpdk", "--worker-id", "0", "-w", "1",
            "--port", "net_null0", "--local-mac", "02:00:00:00:00:09", "--local-ip", "10.0.0.9",
            "--eal-args", EAL_ARGS + " --no-such-eal-option");
        final String output = CliProcesses.await(worker, log, 60);
        assertThat(worker.exitValue()).as(output).isEqualTo(1);
        assertThat(output).contains("inagg: rte_eal_init failed").contains("EAL arguments:")
            .contains("--no-such-eal-option").contains("EAL log:");
    }

    // -------------------------------------------------------------------------------------------------------------

    /** Starts the switch, then the workers, checks each worker's result and pool, then stops the switch. */
    private void runJob(
        final int workers, final int elements, final List<String> switchWrapper, final List<String> switchArgs,
        final java.util.function.IntFunction<List<String>> workerWrapper, final List<List<String>> workerArgs)
        throws Exception
    {
        final long seed = 5;
        final double loss = 0.03;
        final String expected = String.format(Locale.ROOT, "%08x", expectedCrc(workers, elements, seed));

        final Path switchLog = dir.resolve("switch.log");
        final List<String> args = new ArrayList<>(List.of("switch", "--transport", "dpdk", "--eal-args", EAL_ARGS,
            "--stats-interval", "0", "--duration", "110", "--loss", Double.toString(loss)));
        args.addAll(switchArgs);
        final Process switchProcess = processes.start(switchLog, switchWrapper, args.toArray(String[]::new));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (switchProcess.isAlive() && System.nanoTime() - deadline < 0
            && !Files.readString(switchLog).contains("inagg switch listening"))
        {
            Thread.sleep(20);
        }
        assertThat(Files.readString(switchLog)).as(Files.readString(switchLog)).contains("inagg switch listening");

        final List<Process> workerProcesses = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            final List<String> wargs = new ArrayList<>(List.of("worker", "--transport", "dpdk", "--eal-args", EAL_ARGS,
                "--worker-id", Integer.toString(w), "-w", Integer.toString(workers), "-n", Integer.toString(elements),
                "-i", "2", "--seed", Long.toString(seed), "--loss", Double.toString(loss), "--no-progress",
                "--local-mac", mac(w + 1), "--local-ip", "10.0.1." + (w + 1),
                "--peer", SWITCH_MAC + "/" + SWITCH_IP + ":9000"));
            wargs.addAll(workerArgs.get(w));
            workerProcesses.add(processes.start(dir.resolve("worker" + w + ".log"), workerWrapper.apply(w),
                wargs.toArray(String[]::new)));
        }
        final List<String> workerOutputs = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            workerOutputs.add(CliProcesses.await(workerProcesses.get(w), dir.resolve("worker" + w + ".log"), 90));
        }
        switchProcess.destroy(); // SIGTERM: the shutdown hook stops the switch agent, then closes DPDK
        final String switchOutput = CliProcesses.await(switchProcess, switchLog, 30);
        for (int w = 0; w < workers; w++)
        {
            final String output = workerOutputs.get(w);
            final String context = "worker " + w + ":\n" + output + "\nswitch:\n" + switchOutput;
            assertThat(workerProcesses.get(w).exitValue()).as(context).isZero();
            final Matcher crc = CRC.matcher(output);
            assertThat(crc.find()).as(context).isTrue();
            assertThat(crc.group(1)).as("worker %d result bit-identical to the in-process run; %s", w, context)
                .isEqualTo(expected);
            assertPoolBack(output, context);
        }
        assertPoolBack(switchOutput, "switch:\n" + switchOutput);
        assertThat(switchOutput).contains("frames sent");
    }

    private static void assertPoolBack(final String output, final String context)
    {
        final Matcher pool = POOL.matcher(output);
        assertThat(pool.find()).as(context).isTrue();
        assertThat(pool.group(2)).as("mbufs back in the pool; %s", context).isEqualTo(pool.group(1));
    }

    /** The all-reduce the worker processes run, over in-process rings without faults. */
    private static long expectedCrc(final int workers, final int elements, final long seed)
    {
        final float[][] sources = new float[workers][elements];
        final float[][] results = new float[workers][elements];
        for (int w = 0; w < workers; w++)
        {
            SyntheticGradients.fill(sources[w], w, 0, seed);
        }
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(workers)))
        {
            cluster.allReduce(sources, results);
        }
        return SyntheticGradients.crc32(results[0]);
    }

    private static String mac(final int node)
    {
        return node == 0 ? SWITCH_MAC : String.format(Locale.ROOT, "02:00:00:00:01:%02x", node);
    }

    private static String memif(final String name, final String role, final int id, final String socket)
    {
        return name + ",role=" + role + ",id=" + id + ",socket=" + socket + ",socket-abstract=no";
    }

    private static float[][] inputs(final int workers, final int length, final long seed)
    {
        final float[][] tensors = new float[workers][length];
        for (int w = 0; w < workers; w++)
        {
            SyntheticGradients.fill(tensors[w], w, 0, seed);
        }
        return tensors;
    }

    private static float[][] runLocal(final ClusterOptions options, final float[][] inputs)
    {
        final float[][] tensors = new float[inputs.length][];
        for (int w = 0; w < inputs.length; w++)
        {
            tensors[w] = inputs[w].clone();
        }
        try (LocalCluster cluster = LocalCluster.start(options)) // close() fails on an mbuf leak
        {
            cluster.allReduce(tensors);
        }
        return tensors;
    }

    private static void assertBitIdentical(final float[][] actual, final float[] expected, final String what)
    {
        for (int w = 0; w < actual.length; w++)
        {
            for (int i = 0; i < expected.length; i++)
            {
                if (Float.floatToRawIntBits(actual[w][i]) != Float.floatToRawIntBits(expected[i]))
                {
                    fail(what + ": worker " + w + " element " + i + " is " + actual[w][i] + " but over in-process "
                        + "rings " + expected[i]);
                }
            }
        }
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
