package org.inagg.perf.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code inagg} CLI commands run as processes of this JVM's runtime and classpath, each logging to a file. Their
 * counters files go to a directory of their own (INAGG_DIR, unless the environment given says otherwise), removed on
 * close: the processes killed here leave theirs.
 */
final class CliProcesses implements AutoCloseable
{
    private final List<Process> processes = new ArrayList<>();
    private Path countersDirectory;

    /** Starts {@code inagg args...}, prefixed by {@code wrapper} (e.g. {@code ip netns exec ns}). */
    Process start(final Path log, final List<String> wrapper, final String... args) throws IOException
    {
        return start(log, wrapper, Map.of(), args);
    }

    /**
     * Starts {@code inagg args...} like {@link #start(Path, List, String...)}, with {@code environment} set in the
     * process's environment (a null value removes the variable).
     */
    Process start(final Path log, final List<String> wrapper, final Map<String, String> environment,
        final String... args) throws IOException
    {
        final List<String> command = new ArrayList<>(wrapper);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx512m", "-XX:+UseSerialGC",
            "-cp", System.getProperty("java.class.path"), InaggCli.class.getName()));
        command.addAll(List.of(args));
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(log.toFile());
        if (countersDirectory == null)
        {
            countersDirectory = Files.createTempDirectory("inagg-counters");
        }
        builder.environment().put("INAGG_DIR", countersDirectory.toString());
        environment.forEach((name, value) ->
        {
            if (value == null)
            {
                builder.environment().remove(name);
            }
            else
            {
                builder.environment().put(name, value);
            }
        });
        final Process process = builder.start();
        processes.add(process);
        return process;
    }

    /** Waits for the process (killing it after {@code seconds}) and returns its log. */
    static String await(final Process process, final Path log, final long seconds) throws Exception
    {
        if (!process.waitFor(seconds, TimeUnit.SECONDS))
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            return Files.readString(log) + "\n[killed after " + seconds + " s]";
        }
        return Files.readString(log);
    }

    /** Waits until the log contains {@code text} (or the process ended, or {@code seconds} passed). */
    static void awaitLine(final Process process, final Path log, final String text, final long seconds)
        throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (process.isAlive() && System.nanoTime() - deadline < 0 && !Files.readString(log).contains(text))
        {
            Thread.sleep(20);
        }
    }

    /** Kills whatever is still running. */
    @Override
    public void close() throws InterruptedException
    {
        for (final Process process : processes)
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (countersDirectory != null)
        {
            try (var files = Files.list(countersDirectory))
            {
                for (final Path file : files.toList())
                {
                    Files.deleteIfExists(file);
                }
                Files.deleteIfExists(countersDirectory);
            }
            catch (final IOException ex)
            {
                // a temporary directory left behind
            }
        }
    }
}
