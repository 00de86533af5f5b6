package org.inagg.p4.bmv2;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A bmv2 {@code simple_switch} child process running a compiled P4 program, up once its Thrift server answers (so the
 * control plane can program it at once), stopped by {@link #close()}.
 * <p>
 * No logging by default: bmv2's trace logging slows the switch several times over; ask for a log file when debugging.
 * Every switch gets a work folder of its own (its output, the nanomsg notification socket, pcap files in
 * {@link Context#useFiles(int) file mode}), so switches started side by side do not share bmv2's default
 * {@code /tmp/bmv2-0-notifications.ipc}. Every live switch is in a registry that a JVM shutdown hook empties: a switch
 * never outlives the JVM that started it (unless that JVM is killed outright).
 */
public final class SimpleSwitchProcess implements AutoCloseable
{
    private static final Set<SimpleSwitchProcess> LIVE = ConcurrentHashMap.newKeySet();
    private static final Duration PROBE_INTERVAL = Duration.ofMillis(100);

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(
            () -> LIVE.forEach(SimpleSwitchProcess::close), "inagg simple_switch reaper"));
    }

    /**
     * How to start a switch, Aeron style: fluent setters, {@link SimpleSwitchProcess#start(Context)} validates.
     */
    public static final class Context
    {
        private P4Toolchain toolchain;
        private Path json;
        private final Map<Integer, String> interfaces = new TreeMap<>();
        private int thriftPort;
        private Path logFile;
        private final List<String> commandPrefix = new ArrayList<>();
        private int useFilesDelaySeconds = -1;
        private Path workDirectory;
        private Duration startTimeout = Duration.ofSeconds(60);
        private Duration stopTimeout = Duration.ofSeconds(10);
        private int deviceId;

        /** The tools; {@link P4Toolchain#locate()} by default. */
        public Context toolchain(final P4Toolchain toolchain)
        {
            this.toolchain = toolchain;
            return this;
        }

        /** The compiled program ({@link Bmv2Program#v1modelJson()}); required. */
        public Context json(final Path json)
        {
            this.json = json;
            return this;
        }

        /**
         * Attaches an interface as a switch port ({@code -i port@name}); in {@link #useFiles(int) file mode} the name
         * is the prefix of that port's pcap files ({@code name_in.pcap}, {@code name_out.pcap}) in the work folder.
         */
        public Context port(final int port, final String interfaceName)
        {
            if (port < 0 || port > 511)
            {
                throw new IllegalArgumentException("switch port must be in 0..511, got " + port);
            }
            interfaces.put(port, interfaceName);
            return this;
        }

        /** The Thrift port; 0 (default) picks a free one. */
        public Context thriftPort(final int thriftPort)
        {
            this.thriftPort = thriftPort;
            return this;
        }

        /** bmv2's log (trace level, flushed per message), or null (default) for none: logging slows bmv2 a lot. */
        public Context logFile(final Path logFile)
        {
            this.logFile = logFile;
            return this;
        }

        /**
         * Runs the switch, its readiness probe and its CLI under this prefix, e.g. {@code ip netns exec NS}: the
         * switch's ports and Thrift server are then that network namespace's.
         */
        public Context commandPrefix(final List<String> prefix)
        {
            commandPrefix.clear();
            commandPrefix.addAll(prefix);
            return this;
        }

        /**
         * Pcap file ports ({@code --use-files}): bmv2 waits this many seconds (counted after its Thrift server is up,
         * about 2.5 s after start for inagg), then replays each port's {@code <name>_in.pcap} and writes
         * {@code <name>_out.pcap}, both in the work folder.
         */
        public Context useFiles(final int delaySeconds)
        {
            useFilesDelaySeconds = delaySeconds;
            return this;
        }

        /** The switch's working folder (pcap files, output); a fresh temp folder, deleted on close, by default. */
        public Context workDirectory(final Path workDirectory)
        {
            this.workDirectory = workDirectory;
            return this;
        }

        /** How long to wait for the Thrift server (60 s by default; the 14 MB program takes ~2.5 s to load). */
        public Context startTimeout(final Duration startTimeout)
        {
            this.startTimeout = startTimeout;
            return this;
        }

        /** How long {@link #close()} waits after SIGTERM before SIGKILL (10 s by default). */
        public Context stopTimeout(final Duration stopTimeout)
        {
            this.stopTimeout = stopTimeout;
            return this;
        }

        /** bmv2's device id (0 by default). */
        public Context deviceId(final int deviceId)
        {
            this.deviceId = deviceId;
            return this;
        }
    }

    private final Context context;
    private final Process process;
    private final Path workDirectory;
    private final boolean ownsWorkDirectory;
    private final Path outputFile;
    private final int thriftPort;
    private final SimpleSwitchCli cli;
    private boolean closed;

    private SimpleSwitchProcess(
        final Context context, final Process process, final Path workDirectory, final boolean ownsWorkDirectory,
        final Path outputFile, final int thriftPort)
    {
        this.context = context;
        this.process = process;
        this.workDirectory = workDirectory;
        this.ownsWorkDirectory = ownsWorkDirectory;
        this.outputFile = outputFile;
        this.thriftPort = thriftPort;
        this.cli = new SimpleSwitchCli(context.toolchain, thriftPort, context.commandPrefix);
    }

    /**
     * Starts a switch and waits until its Thrift server answers.
     *
     * @throws Bmv2Exception with the switch's output if it exits first or does not answer within the start timeout.
     */
    public static SimpleSwitchProcess start(final Context context)
    {
        if (context.json == null || !Files.isRegularFile(context.json))
        {
            throw new IllegalArgumentException("simple_switch needs a compiled program: json " + context.json);
        }
        if (context.toolchain == null)
        {
            context.toolchain = P4Toolchain.locate();
        }
        final boolean ownsWorkDirectory = context.workDirectory == null;
        final Path workDirectory;
        try
        {
            workDirectory = ownsWorkDirectory ? Files.createTempDirectory("inagg-bmv2-") : context.workDirectory;
            Files.createDirectories(workDirectory);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("creating simple_switch's work folder", ex);
        }
        final int thriftPort = context.thriftPort != 0 ? context.thriftPort : freePort();
        final List<String> args = new ArrayList<>();
        args.add("--thrift-port");
        args.add(Integer.toString(thriftPort));
        args.add("--device-id");
        args.add(Integer.toString(context.deviceId));
        args.add("--notifications-addr");
        args.add("ipc://" + workDirectory.toAbsolutePath().resolve("notifications.ipc"));
        if (context.logFile != null)
        {
            args.add("--log-file");
            args.add(context.logFile.toAbsolutePath().toString());
            args.add("--log-flush");
        }
        else
        {
            args.add("--log-level");
            args.add("off");
        }
        if (context.useFilesDelaySeconds >= 0)
        {
            args.add("--use-files");
            args.add(Integer.toString(context.useFilesDelaySeconds));
        }
        context.interfaces.forEach((port, name) ->
        {
            args.add("-i");
            args.add(port + "@" + name);
        });
        args.add(context.json.toAbsolutePath().toString());

        final Path outputFile = workDirectory.resolve("simple_switch.out");
        final Process process;
        try
        {
            process = context.toolchain.processBuilder(context.commandPrefix, P4Toolchain.SIMPLE_SWITCH, args)
                .directory(workDirectory.toFile())
                .redirectErrorStream(true)
                .redirectOutput(outputFile.toFile())
                .start();
            process.getOutputStream().close();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("starting " + context.toolchain.tool(P4Toolchain.SIMPLE_SWITCH), ex);
        }
        final SimpleSwitchProcess simpleSwitch =
            new SimpleSwitchProcess(context, process, workDirectory, ownsWorkDirectory, outputFile, thriftPort);
        LIVE.add(simpleSwitch);
        try
        {
            simpleSwitch.awaitThrift();
        }
        catch (final RuntimeException ex)
        {
            simpleSwitch.close();
            throw ex;
        }
        return simpleSwitch;
    }

    private static int freePort()
    {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("finding a free Thrift port", ex);
        }
    }

    /** Waits until the switch's Thrift port takes a connection, the switch exits, or the start timeout passes. */
    private void awaitThrift()
    {
        final long deadline = System.nanoTime() + context.startTimeout.toNanos();
        try
        {
            while (true)
            {
                if (!process.isAlive())
                {
                    throw new Bmv2Exception("simple_switch exited (code " + process.exitValue() + ") before its"
                        + " Thrift server answered on port " + thriftPort + ": " + outputTail());
                }
                if (thriftAnswers())
                {
                    return;
                }
                if (System.nanoTime() > deadline)
                {
                    throw new Bmv2Exception("simple_switch's Thrift server did not answer on port " + thriftPort
                        + " within " + context.startTimeout + ": " + outputTail());
                }
                Thread.sleep(PROBE_INTERVAL.toMillis());
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new Bmv2Exception("interrupted while waiting for simple_switch", ex);
        }
    }

    private boolean thriftAnswers() throws InterruptedException
    {
        if (context.commandPrefix.isEmpty())
        {
            try (Socket socket = new Socket())
            {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), thriftPort), 500);
                return true;
            }
            catch (final IOException ex)
            {
                return false;
            }
        }
        // The port is localhost under the prefix (e.g. a network namespace): probe from there.
        final List<String> probe = new ArrayList<>(context.commandPrefix);
        probe.addAll(List.of("python3", "-c", "import socket, sys\n"
            + "s = socket.socket()\ns.settimeout(0.5)\nsys.exit(s.connect_ex(('127.0.0.1', " + thriftPort + ")))"));
        try
        {
            final Process check = new ProcessBuilder(probe).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!check.waitFor(5, TimeUnit.SECONDS))
            {
                check.destroyForcibly();
                return false;
            }
            return check.exitValue() == 0;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("probing simple_switch's Thrift port with " + probe, ex);
        }
    }

    /** The CLI for this switch (same Thrift port and command prefix). */
    public SimpleSwitchCli cli()
    {
        return cli;
    }

    public int thriftPort()
    {
        return thriftPort;
    }

    /** The switch's working folder: pcap files in file mode, its output ({@code simple_switch.out}). */
    public Path workDirectory()
    {
        return workDirectory;
    }

    public long pid()
    {
        return process.pid();
    }

    public boolean isAlive()
    {
        return process.isAlive();
    }

    /** The last characters the switch printed. */
    public String outputTail()
    {
        try
        {
            return Files.exists(outputFile)
                ? P4Toolchain.tail(Files.readString(outputFile, StandardCharsets.UTF_8), 4000) : "";
        }
        catch (final IOException ex)
        {
            return "(output unreadable: " + ex.getMessage() + ")";
        }
    }

    /**
     * Stops the switch: SIGTERM, then SIGKILL after the stop timeout, and waits for it (and whatever a command prefix
     * started); deletes the work folder if this class made it. Idempotent.
     */
    @Override
    public void close()
    {
        synchronized (this)
        {
            if (closed)
            {
                return;
            }
            closed = true;
        }
        cli.close();
        try
        {
            final List<ProcessHandle> descendants = process.descendants().toList();
            process.destroy();
            if (!process.waitFor(context.stopTimeout.toMillis(), TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly();
                process.waitFor(context.stopTimeout.toMillis(), TimeUnit.MILLISECONDS);
            }
            for (final ProcessHandle descendant : descendants)
            {
                descendant.destroyForcibly();
            }
        }
        catch (final InterruptedException ex)
        {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        finally
        {
            LIVE.remove(this);
            if (ownsWorkDirectory)
            {
                deleteTree(workDirectory);
            }
        }
    }

    private static void deleteTree(final Path folder)
    {
        try (Stream<Path> paths = Files.walk(folder))
        {
            for (final Path path : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
        catch (final IOException ignored)
        {
            // a temp folder left behind
        }
    }

    @Override
    public String toString()
    {
        return "simple_switch[pid " + process.pid() + ", thrift " + thriftPort + "]";
    }
}
