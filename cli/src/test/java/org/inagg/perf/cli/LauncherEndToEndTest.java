package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.inagg.api.launch.Launcher;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code inagg worker} processes that take their rank and world size from their launcher, with no --worker-id or -w:
 * under Open MPI's {@code mpirun} (skipped, saying why, without it unless {@code -Dinagg.mpi.tests.require=true}), through
 * {@code inagg controller} and a switch it programs, as the README's quick start runs them; and with torchrun's
 * variables against an open lab {@code inagg switch}. Every worker must finish within the
 * fixed-point error bound of the double-precision sum (the worker checks it) with the same result, bit for bit.
 */
class LauncherEndToEndTest
{
    private static final Pattern CRC = Pattern.compile("result crc32\\s+([0-9a-f]{8})");
    private static final Pattern TAGGED = Pattern.compile("^\\[\\d+,(\\d+)\\]<std(?:out|err)>:(.*)$",
        Pattern.MULTILINE);
    private static final int ELEMENTS = 20_000;
    private static final long SEED = 5;
    private static final List<String> RUN = List.of("-n", Integer.toString(ELEMENTS), "-i", "2", "--seed",
        Long.toString(SEED), "--no-progress", "--peer-timeout-ms", "30000");

    @TempDir
    Path dir;

    private final CliProcesses processes = new CliProcesses();

    /** mpirun, whose workers outlive a SIGKILL of mpirun itself. */
    private Process mpirunProcess;

    @AfterEach
    void tearDown() throws Exception
    {
        if (mpirunProcess != null)
        {
            mpirunProcess.descendants().forEach(ProcessHandle::destroyForcibly);
        }
        processes.close();
    }

    @Test
    @Timeout(120)
    void shouldAllReduceUnderMpirunWithoutRankFlags() throws Exception
    {
        final String mpirun = onPath("mpirun");
        if (mpirun == null)
        {
            final String why = "mpirun not found on PATH (Debian: apt-get install openmpi-bin)";
            if (Boolean.getBoolean("inagg.mpi.tests.require"))
            {
                Assertions.fail("MPI tests are required here (-Dinagg.mpi.tests.require=true) but " + why);
            }
            Assumptions.abort("skipped: " + why);
        }
        final int workers = 4;
        // The README's quick start: a switch that takes its jobs from a controller, and workers that find both
        // through INAGG_CONTROLLER, named by Open MPI's job id, with neither addresses nor ranks on their command line.
        final String controllerUrl = startSwitchAndController();
        final Path log = dir.resolve("mpirun.log");
        final List<String> args = new ArrayList<>(List.of("worker"));
        args.addAll(RUN);
        final Map<String, String> env = withoutLauncherVariables();
        env.put("INAGG_CONTROLLER", controllerUrl);
        env.put("INAGG_JOB_SECRET", "mpirun-shared-job-secret"); // one job's ranks share it, as mpirun -x passes it
        mpirunProcess = processes.start(log, List.of(mpirun, "--allow-run-as-root", "--oversubscribe", "-np",
            Integer.toString(workers), "--tag-output", "-x", "INAGG_CONTROLLER", "-x", "INAGG_JOB_SECRET"), env,
            args.toArray(String[]::new));
        final String output = CliProcesses.await(mpirunProcess, log, 100);
        assertThat(mpirunProcess.exitValue()).as(output).isZero();
        assertThat(output).containsPattern("job '\\d+' is job 1, session 1");

        final Map<Integer, StringBuilder> byRank = new TreeMap<>();
        final Matcher line = TAGGED.matcher(output);
        while (line.find())
        {
            byRank.computeIfAbsent(Integer.parseInt(line.group(1)), r -> new StringBuilder())
                .append(line.group(2)).append('\n');
        }
        assertThat(byRank.keySet()).as(output).containsExactly(0, 1, 2, 3);
        final List<String> crcs = new ArrayList<>();
        byRank.forEach((rank, text) -> crcs.add(checkWorker(rank, workers, "Open MPI", text.toString())));
        assertThat(crcs).as("every worker's result, bit-identical: %s", output).containsOnly(crcs.get(0));
    }

    @Test
    @Timeout(120)
    void shouldAllReduceWithTorchrunVariablesWithoutRankFlags() throws Exception
    {
        final int workers = 3;
        final String switchAddress = startSwitch(workers);
        final List<Process> started = new ArrayList<>();
        for (int rank = 0; rank < workers; rank++)
        {
            final Map<String, String> env = withoutLauncherVariables();
            env.putAll(Map.of("RANK", Integer.toString(rank), "WORLD_SIZE", Integer.toString(workers),
                "LOCAL_RANK", Integer.toString(rank), "LOCAL_WORLD_SIZE", Integer.toString(workers),
                "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "29500", "TORCHELASTIC_RUN_ID", "inagg-test"));
            final List<String> args = new ArrayList<>(List.of("worker", "--switch", switchAddress));
            args.addAll(RUN);
            started.add(processes.start(dir.resolve("worker" + rank + ".log"), List.of(), env,
                args.toArray(String[]::new)));
        }
        final List<String> crcs = new ArrayList<>();
        for (int rank = 0; rank < workers; rank++)
        {
            final String output = CliProcesses.await(started.get(rank), dir.resolve("worker" + rank + ".log"), 100);
            assertThat(started.get(rank).exitValue()).as(output).isZero();
            crcs.add(checkWorker(rank, workers, "torchrun", output));
        }
        assertThat(crcs).as("every worker's result, bit-identical").containsOnly(crcs.get(0));
    }

    @Test
    @Timeout(60)
    void shouldRefuseAWorkerWhoseLaunchersDisagree() throws Exception
    {
        final Map<String, String> env = withoutLauncherVariables();
        env.putAll(Map.of("RANK", "1", "WORLD_SIZE", "4", "OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4"));
        final Path log = dir.resolve("worker.log");
        final Process worker = processes.start(log, List.of(), env, "worker", "--switch", "127.0.0.1:9", "-i", "1");
        final String output = CliProcesses.await(worker, log, 50);
        assertThat(worker.exitValue()).as(output).isEqualTo(1);
        assertThat(output).contains("inagg: launchers disagree: torchrun says rank 1 of 4 (RANK=1, WORLD_SIZE=4) but "
            + "Open MPI says rank 2 of 4 (OMPI_COMM_WORLD_RANK=2, OMPI_COMM_WORLD_SIZE=4)");
    }

    /** Checks that worker {@code rank} knew its rank from {@code launcher} and met the error bound; its crc32. */
    private static String checkWorker(final int rank, final int workers, final String launcher, final String output)
    {
        assertThat(output).as("rank %d", rank)
            .contains("inagg worker " + rank + "/" + workers + " (rank from " + launcher + ") of job 1")
            .containsPattern("within bound\\s+yes");
        final Matcher crc = CRC.matcher(output);
        assertThat(crc.find()).as("rank %d: %s", rank, output).isTrue();
        return crc.group(1);
    }

    /** Starts {@code inagg switch} with job 1 of {@code workers} on a free loopback port and returns host:port. */
    private String startSwitch(final int workers) throws Exception
    {
        final int port;
        try (DatagramSocket probe = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)))
        {
            port = probe.getLocalPort();
        }
        final String address = "127.0.0.1:" + port;
        final Path log = dir.resolve("switch.log");
        final Process sw = processes.start(log, List.of(), "switch", "--bind", address, "--open", "--job", "1:" + workers,
            "--stats-interval", "0", "--duration", "110");
        CliProcesses.awaitLine(sw, log, "inagg switch listening", 60);
        assertThat(Files.readString(log)).contains("inagg switch listening");
        return address;
    }

    /**
     * Starts {@code inagg switch --control} and {@code inagg controller} programming it, on free loopback ports;
     * returns the controller's URL.
     */
    private String startSwitchAndController() throws Exception
    {
        final int data;
        try (DatagramSocket probe = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)))
        {
            data = probe.getLocalPort();
        }
        final int control;
        final int http;
        try (ServerSocket first = new ServerSocket(0); ServerSocket second = new ServerSocket(0))
        {
            control = first.getLocalPort();
            http = second.getLocalPort();
        }
        final Path switchLog = dir.resolve("switch.log");
        final Process sw = processes.start(switchLog, List.of(), "switch", "--bind", "127.0.0.1:" + data,
            "--control", "127.0.0.1:" + control, "--stats-interval", "0", "--duration", "110");
        CliProcesses.awaitLine(sw, switchLog, "inagg switch listening", 60);
        final Path controllerLog = dir.resolve("controller.log");
        final Process controller = processes.start(controllerLog, List.of(), "controller", "--bind",
            "127.0.0.1:" + http, "--switch-control", "http://127.0.0.1:" + control, "--journal",
            dir.resolve("journal").toString());
        CliProcesses.awaitLine(controller, controllerLog, "inagg controller listening", 60);
        assertThat(Files.readString(controllerLog)).contains("inagg controller listening");
        return "http://127.0.0.1:" + http;
    }

    /** Removals of every launcher variable this JVM inherited (a CI job under Slurm, say), to add to. */
    private static Map<String, String> withoutLauncherVariables()
    {
        final Map<String, String> env = new HashMap<>();
        for (final Launcher launcher : Launcher.values())
        {
            launcher.variables().forEach(variable -> env.put(variable, null));
        }
        return env;
    }

    private static String onPath(final String program)
    {
        for (final String entry : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        {
            final Path candidate = Path.of(entry.isEmpty() ? "." : entry, program);
            if (Files.isExecutable(candidate))
            {
                return candidate.toString();
            }
        }
        return null;
    }
}
