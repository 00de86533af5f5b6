package org.inagg.perf.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** {@code inagg} CLI commands run as processes of this JVM's runtime and classpath, each logging to a file. */
final class CliProcesses implements AutoCloseable
{
    private final List<Process> processes = new ArrayList<>();

    /** Starts {@code inagg args...}, prefixed by {@code wrapper} (e.g. {@code ip netns exec ns}). */
    Process start(final Path log, final List<String> wrapper, final String... args) throws IOException
    {
        final List<String> command = new ArrayList<>(wrapper);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx512m", "-XX:+UseSerialGC",
            "-cp", System.getProperty("java.class.path"), InaggCli.class.getName()));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
            .start();
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
    }
}
