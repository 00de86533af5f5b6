package org.inagg.perf.peers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The processes of one peer's run, each logging to a file; all of them (and their children: mpirun's ranks) are killed
 * on {@link #close()}, so a run that times out or fails leaves nothing behind.
 */
public final class ChildProcesses implements AutoCloseable
{
    /** How long children get to exit on SIGTERM before SIGKILL. */
    static final long TERM_GRACE_MS = 5_000;

    private static final Pattern P50_MS = Pattern.compile("(?m)^p50 ms ([0-9.]+)$");
    private static final Pattern CPU_MS = Pattern.compile("(?m)^cpu ms ([0-9.]+)$");
    private static final Pattern ELEMENTS_PER_SECOND = Pattern.compile("elements/s(?: \\(tensor\\))?\\s+([0-9.eE+-]+)");

    private final List<Process> processes = new ArrayList<>();
    private final List<Path> logs = new ArrayList<>();

    /** Starts {@code command} with {@code environment} added, its output and errors to {@code log}. */
    public Process start(final List<String> command, final Map<String, String> environment, final Path log)
    {
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(nullDevice()));
        builder.environment().putAll(environment);
        try
        {
            final Process process = builder.start();
            processes.add(process);
            logs.add(log);
            return process;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start " + String.join(" ", command) + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Waits for {@code waited} to end before {@code deadlineNs} (System.nanoTime); returns at once when one of them
     * fails (its peers would otherwise wait for it until the deadline).
     *
     * @return true when all ended with status 0.
     */
    public static boolean awaitAll(final List<Process> waited, final long deadlineNs) throws InterruptedException
    {
        while (true)
        {
            boolean allDone = true;
            for (final Process process : waited)
            {
                if (process.isAlive())
                {
                    allDone = false;
                }
                else if (process.exitValue() != 0)
                {
                    return false;
                }
            }
            if (allDone)
            {
                return true;
            }
            final long left = deadlineNs - System.nanoTime();
            if (left <= 0)
            {
                return false;
            }
            Thread.sleep(Math.min(50, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))));
        }
    }

    /** Waits until {@code log} contains {@code text}: true, or false once {@code deadlineNs} (System.nanoTime) passed. */
    public static boolean awaitText(final Path log, final String text, final long deadlineNs) throws InterruptedException
    {
        while (System.nanoTime() - deadlineNs < 0)
        {
            if (read(log).contains(text))
            {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }

    /** The log's text, empty when it cannot be read. */
    public static String read(final Path log)
    {
        try
        {
            return Files.exists(log) ? Files.readString(log) : "";
        }
        catch (final IOException ex)
        {
            return "";
        }
    }

    /** The last {@code p50 ms VALUE} line of a peer's script (the median all-reduce, slowest rank), NaN if none. */
    static double p50Seconds(final String text)
    {
        return lastNumber(P50_MS, text) / 1e3;
    }

    /**
     * The last {@code cpu ms VALUE} line of a peer's script (every rank's process CPU time over the timed calls,
     * summed, per call) in seconds, NaN if none.
     */
    static double cpuSecondsPerCall(final String text)
    {
        return lastNumber(CPU_MS, text) / 1e3;
    }

    /**
     * The number (thousands separated by commas or not) in the last match of {@code pattern}'s first group in
     * {@code text}, NaN if none.
     */
    static double lastNumber(final Pattern pattern, final String text)
    {
        final Matcher matcher = pattern.matcher(text);
        double last = Double.NaN;
        while (matcher.find())
        {
            last = Double.parseDouble(matcher.group(1).replace(",", ""));
        }
        return last;
    }

    /** The last {@code elements/s VALUE} (or {@code elements/s (tensor) VALUE}) figure in {@code text}. */
    static OptionalDouble elementsPerSecond(final String text)
    {
        final Matcher matcher = ELEMENTS_PER_SECOND.matcher(text);
        OptionalDouble last = OptionalDouble.empty();
        while (matcher.find())
        {
            try
            {
                last = OptionalDouble.of(Double.parseDouble(matcher.group(1)));
            }
            catch (final NumberFormatException ignore)
            {
                // not a figure: keep looking
            }
        }
        return last;
    }

    /** The last non-blank line of {@code text} (for failure reasons), at most 300 characters. */
    public static String lastLine(final String text)
    {
        final String[] lines = text.strip().split("\n");
        final String last = lines.length == 0 ? "" : lines[lines.length - 1].strip();
        return last.isEmpty() ? "(no output)" : last.length() > 300 ? last.substring(0, 300) + "..." : last;
    }

    /** A UDP or TCP port that was free a moment ago on the loopback interface. */
    static int freePort(final boolean udp)
    {
        try
        {
            if (udp)
            {
                try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress()))
                {
                    return socket.getLocalPort();
                }
            }
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
            {
                return socket.getLocalPort();
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot find a free port on the loopback interface", ex);
        }
    }

    /** Whether {@code command} runs and exits 0 within {@code seconds} (an availability probe). */
    static boolean succeeds(final List<String> command, final long seconds) throws InterruptedException
    {
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(seconds, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                return false;
            }
            return process.exitValue() == 0;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    /** Whether an executable named {@code name} is on the PATH. */
    static boolean onPath(final String name)
    {
        final String path = System.getenv("PATH");
        if (path == null)
        {
            return false;
        }
        for (final String dir : path.split(java.io.File.pathSeparator))
        {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name)))
            {
                return true;
            }
        }
        return false;
    }

    /** Copies the class-path resource {@code name} (beside this class) into {@code dir} and returns the copy. */
    static Path resource(final String name, final Path dir)
    {
        try (java.io.InputStream in = ChildProcesses.class.getResourceAsStream(name))
        {
            if (in == null)
            {
                throw new IllegalStateException("resource " + name + " is missing from the class path (rebuild perf)");
            }
            final Path copy = dir.resolve(name);
            Files.copy(in, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            return copy;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot copy " + name + " to " + dir, ex);
        }
    }

    private static java.io.File nullDevice()
    {
        return new java.io.File("/dev/null");
    }

    /**
     * Stops what still runs: SIGTERM first, so a JVM exits through its shutdown (a profile is written at exit:
     * {@code bench-peers --profile}), then SIGKILL to whatever is left after {@link #TERM_GRACE_MS}.
     */
    @Override
    public void close() throws InterruptedException
    {
        for (final Process process : processes)
        {
            process.descendants().forEach(ProcessHandle::destroy);
            process.destroy();
        }
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TERM_GRACE_MS);
        for (final Process process : processes)
        {
            process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        for (final Process process : processes)
        {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        for (final Process process : processes)
        {
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
