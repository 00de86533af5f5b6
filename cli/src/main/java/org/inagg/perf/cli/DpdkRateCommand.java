package org.inagg.perf.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.inagg.services.cli.CliNumbers;
import org.inagg.wire.InaggHeader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code inagg dpdk-rate}: DPDK figures in three parts, each in processes of its own (EAL starts once per process):
 * the raw Java-vs-testpmd burst rates of {@code RawRateHarness} (a child JVM), inagg packets built and sent per second
 * with the time per stage ({@link PacketBuildRate}, this process), and the end-to-end all-reduce rate of a switch
 * process and worker processes over memif (child JVMs running {@code inagg switch|worker --transport dpdk}).
 * Every option is checked before a child starts; no child is waited for longer than {@code --child-timeout-s}, and
 * one that outlives it, or the command, is killed.
 */
@Command(
    name = "dpdk-rate",
    mixinStandardHelpOptions = true,
    description = "DPDK rates: Java vs dpdk-testpmd (io/txonly/rxonly), inagg packets built and sent per second with "
        + "ns per stage, and end-to-end aggregated elements per second over memif (switch + worker processes).")
final class DpdkRateCommand implements Callable<Integer>
{
    private static final String EAL_ARGS = "--no-huge -m 256 --no-pci";
    private static final String SWITCH_MAC = "02:00:00:00:00:01";
    private static final String SWITCH_IP = "10.0.0.1";
    private static final Pattern WORKER_TIME = Pattern.compile("time\\s+([0-9.]+) s for (\\d+) all-reduces of ([0-9,]+)");
    private static final Pattern RETRANSMISSIONS = Pattern.compile("retransmissions\\s+([0-9,]+)");
    private static final List<String> PARTS = List.of("raw", "build", "memif");
    private static final long MAX_SECONDS = 3600;
    private static final int MAX_WORKERS = 64;
    private static final Pattern CRC = Pattern.compile("result crc32\\s+([0-9a-f]+)");

    @Spec
    private CommandSpec spec;

    @Option(names = "--seconds", defaultValue = "6", description = "Seconds per raw mode and for the packet build "
        + "loop (default ${DEFAULT-VALUE}).")
    private int seconds;

    @Option(names = "--warmup", defaultValue = "3", description = "Seconds of warm-up of the packet build loop "
        + "(default ${DEFAULT-VALUE}).")
    private int warmUpSeconds;

    @Option(names = "--cpu", defaultValue = "-1", description = "CPU of the polling thread (default: the last).")
    private int cpu;

    @Option(names = "--rounds", defaultValue = "1", description = "Raw harness rounds (default ${DEFAULT-VALUE}).")
    private int rounds;

    @Option(names = "--no-testpmd", description = "Raw harness without dpdk-testpmd.")
    private boolean noTestpmd;

    @Option(names = "--skip", split = ",", description = "Parts to skip: raw, build, memif.")
    private List<String> skip = new ArrayList<>();

    @Option(names = "--lanes", defaultValue = "256", description = "Lanes per packet (default ${DEFAULT-VALUE}).")
    private int lanes;

    @Option(names = {"-w", "--workers"}, defaultValue = "2", description = "memif worker processes (default ${DEFAULT-VALUE}).")
    private int workers;

    @Option(names = {"-n", "--elements"}, defaultValue = "4194304",
        description = "Elements per tensor in the memif run (default ${DEFAULT-VALUE}).")
    private int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "10", description = "All-reduces in the memif run; the "
        + "worker times all of them, JIT warm-up included (default ${DEFAULT-VALUE}).")
    private int iterations;

    @Option(names = "--idle", defaultValue = "backoff", description = "Idle strategy of the memif processes "
        + "(default ${DEFAULT-VALUE}).")
    private String idle;

    @Option(names = "--child-timeout-s", defaultValue = "600", description = "Seconds any child process (raw harness,"
        + " memif switch or worker) may run before it is killed (default ${DEFAULT-VALUE}).")
    private long childTimeoutS;

    private void validate()
    {
        CliNumbers.require("--seconds", seconds, 1, MAX_SECONDS);
        CliNumbers.require("--warmup", warmUpSeconds, 0, MAX_SECONDS);
        CliNumbers.require("--cpu", cpu, -1, Runtime.getRuntime().availableProcessors() - 1);
        CliNumbers.require("--rounds", rounds, 1, 1000);
        CliNumbers.require("--lanes", lanes, 1, InaggHeader.MAX_ELEMENTS_FOR_1500_MTU);
        CliNumbers.require("-w/--workers", workers, 1, MAX_WORKERS);
        CliNumbers.require("-n/--elements", elements, 1, Integer.MAX_VALUE - 8);
        CliNumbers.require("-i/--iterations", iterations, 1, Integer.MAX_VALUE);
        CliNumbers.require("--child-timeout-s", childTimeoutS, 1, 24 * MAX_SECONDS);
        for (final String part : skip)
        {
            if (!PARTS.contains(part))
            {
                throw new IllegalArgumentException("--skip: unknown part '" + part + "' (the parts are "
                    + String.join(", ", PARTS) + ")");
            }
        }
        if (idle.isBlank())
        {
            throw new IllegalArgumentException("--idle must name an idle strategy, e.g. backoff");
        }
    }

    /**
     * Waits for {@code process} at most {@code timeoutS}; past it kills it (and its descendants).
     *
     * @return its exit code.
     * @throws IllegalStateException naming {@code what} and the limit if it had to be killed.
     */
    static int awaitOrKill(final Process process, final long timeoutS, final String what) throws InterruptedException
    {
        if (process.waitFor(timeoutS, TimeUnit.SECONDS))
        {
            return process.exitValue();
        }
        kill(process);
        throw new IllegalStateException(what + " did not end within " + timeoutS + " s (--child-timeout-s); killed");
    }

    /** Kills {@code process} and its descendants if alive, and waits for it a little. */
    static void kill(final Process process) throws InterruptedException
    {
        if (process == null || !process.isAlive())
        {
            return;
        }
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        validate();
        final int pollCpu = cpu >= 0 ? cpu : Runtime.getRuntime().availableProcessors() - 1;
        if (!skip.contains("raw"))
        {
            out.println("== raw burst rates: Java vs dpdk-testpmd (RawRateHarness, child JVM)");
            out.flush();
            final List<String> args = new ArrayList<>(List.of("org.inagg.ffi.dpdk.bench.RawRateHarness", "--seconds",
                Integer.toString(seconds), "--cpu", Integer.toString(pollCpu), "--rounds", Integer.toString(rounds)));
            if (noTestpmd)
            {
                args.add("--no-testpmd");
            }
            final Process raw = new ProcessBuilder(java(args)).inheritIO().start();
            try
            {
                final int exit = awaitOrKill(raw, childTimeoutS, "the raw harness");
                if (exit != 0)
                {
                    out.println("raw harness exited with " + exit);
                }
            }
            finally
            {
                kill(raw);
            }
            out.println();
        }
        if (!skip.contains("build"))
        {
            out.println("== inagg packets built and sent (this process)");
            out.flush();
            PacketBuildRate.run(out, warmUpSeconds, seconds, pollCpu, lanes);
            out.println();
        }
        if (!skip.contains("memif"))
        {
            out.println("== end to end over memif: 1 switch process + " + workers + " worker processes");
            out.flush();
            memif(out);
        }
        out.flush();
        return 0;
    }

    private void memif(final PrintWriter out) throws IOException, InterruptedException
    {
        final Path dir = Files.createTempDirectory("inagg-dpdk-rate");
        final String socket = dir.resolve("memif.sock").toString();
        final List<String> switchArgs = new ArrayList<>(List.of("switch", "--transport", "dpdk", "--eal-args",
            EAL_ARGS, "--open", "--job", "1:" + workers + ":128:" + lanes, "--local-mac", SWITCH_MAC, "--local-ip", SWITCH_IP,
            "--stats-interval", "0", "--idle", idle));
        for (int w = 0; w < workers; w++)
        {
            switchArgs.addAll(List.of("--vdev", "net_memif" + w + ",role=server,id=" + w + ",socket=" + socket
                + ",socket-abstract=no", "--port", "net_memif" + w));
        }
        final Path switchLog = dir.resolve("switch.log");
        out.println("switch: inagg " + String.join(" ", quoted(switchArgs)));
        out.flush();
        final Process switchProcess = start(switchArgs, switchLog);
        final List<Process> workerProcesses = new ArrayList<>();
        try
        {
            runMemif(out, dir, socket, switchProcess, switchLog, workerProcesses);
        }
        finally
        {
            for (final Process worker : workerProcesses)
            {
                kill(worker);
            }
            kill(switchProcess);
        }
    }

    private void runMemif(final PrintWriter out, final Path dir, final String socket, final Process switchProcess,
        final Path switchLog, final List<Process> workerProcesses) throws IOException, InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (switchProcess.isAlive() && System.nanoTime() - deadline < 0
            && !Files.readString(switchLog).contains("inagg switch listening"))
        {
            Thread.sleep(20);
        }
        if (!switchProcess.isAlive())
        {
            out.println("switch failed (exit " + switchProcess.exitValue() + "):\n" + Files.readString(switchLog));
            return;
        }
        for (int w = 0; w < workers; w++)
        {
            final List<String> args = List.of("worker", "--transport", "dpdk", "--eal-args", EAL_ARGS, "--worker-id",
                Integer.toString(w), "-w", Integer.toString(workers), "-n", Integer.toString(elements), "-i",
                Integer.toString(iterations), "--no-progress", "--idle", idle, "--local-mac",
                String.format(Locale.ROOT, "02:00:00:00:01:%02x", w + 1), "--local-ip", "10.0.1." + (w + 1),
                "--peer", SWITCH_MAC + "/" + SWITCH_IP + ":9000", "--vdev", "net_memif0,role=client,id=" + w
                    + ",socket=" + socket + ",socket-abstract=no", "--port", "net_memif0");
            out.println("worker " + w + ": inagg " + String.join(" ", quoted(args)));
            workerProcesses.add(start(args, dir.resolve("worker" + w + ".log")));
        }
        out.flush();
        double slowest = Double.MAX_VALUE;
        boolean ok = true;
        for (int w = 0; w < workers; w++)
        {
            final Process worker = workerProcesses.get(w);
            int exit;
            try
            {
                exit = awaitOrKill(worker, childTimeoutS, "worker " + w);
            }
            catch (final IllegalStateException ex)
            {
                out.println(ex.getMessage());
                exit = -1;
            }
            final String log = Files.readString(dir.resolve("worker" + w + ".log"));
            final Matcher time = WORKER_TIME.matcher(log);
            final Matcher retransmissions = RETRANSMISSIONS.matcher(log);
            final Matcher crc = CRC.matcher(log);
            if (exit != 0 || !time.find())
            {
                out.println("worker " + w + " failed (exit " + exit + "):\n" + log);
                ok = false;
                continue;
            }
            final double s = Double.parseDouble(time.group(1));
            final double rate = Integer.parseInt(time.group(2)) * (double)Integer.parseInt(time.group(3)
                .replace(",", "")) / s;
            slowest = Math.min(slowest, rate);
            out.printf(Locale.ROOT, "worker %d: %.3f s, %.3e elements/s, retransmissions %s, result crc32 %s%n", w, s,
                rate, retransmissions.find() ? retransmissions.group(1) : "?", crc.find() ? crc.group(1) : "?");
            log.lines().filter(line -> line.startsWith("dpdk: ") && !line.startsWith("dpdk: EAL")).forEach(
                line -> out.println("  " + line));
        }
        switchProcess.destroy();
        if (!switchProcess.waitFor(30, TimeUnit.SECONDS))
        {
            kill(switchProcess);
        }
        Files.readString(switchLog).lines().filter(line -> line.startsWith("dpdk: ") && !line.startsWith("dpdk: EAL"))
            .forEach(line -> out.println("switch: " + line));
        if (ok)
        {
            out.printf(Locale.ROOT, "all-reduce rate (slowest worker): %.3e elements/s per tensor; the switch "
                + "aggregated %.3e worker elements/s%n", slowest, slowest * workers);
        }
        out.flush();
    }

    private static List<String> quoted(final List<String> args)
    {
        return args.stream().map(a -> a.contains(" ") ? "\"" + a + "\"" : a).toList();
    }

    private static Process start(final List<String> cliArgs, final Path log) throws IOException
    {
        final List<String> args = new ArrayList<>(List.of(InaggCli.class.getName()));
        args.addAll(cliArgs);
        return new ProcessBuilder(java(args)).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static List<String> java(final List<String> mainAndArgs)
    {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path")));
        command.addAll(mainAndArgs);
        return command;
    }
}
