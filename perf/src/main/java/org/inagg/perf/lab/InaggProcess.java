package org.inagg.perf.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An {@code inagg} CLI command run as a child JVM of this JVM's runtime and class path (the jar when started by
 * {@code bin/inagg}), optionally inside a network namespace, its output in a log file.
 *
 * @param process the child ({@code ip netns exec} execs the JVM, so this is the JVM itself).
 * @param log     its standard output and error.
 */
public record InaggProcess(Process process, Path log)
{
    /** JVM options every inagg process needs, and a small heap: a lab runs many of them on one machine. */
    static final List<String> JVM_OPTIONS = List.of("--add-modules", "jdk.incubator.vector",
        "--enable-native-access=ALL-UNNAMED", "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx512m",
        "-XX:+UseSerialGC", "-Xshare:auto");

    /** Starts {@code inagg args...} behind {@code prefix} (e.g. {@code ip netns exec NS}). */
    public static InaggProcess start(final List<String> prefix, final Path log, final List<String> args)
    {
        final List<String> command = new ArrayList<>(prefix);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.inagg.perf.cli.InaggCli"));
        command.addAll(args);
        try
        {
            return new InaggProcess(new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                .start(), log);
        }
        catch (final IOException ex)
        {
            throw new LabException("cannot start " + String.join(" ", command), ex);
        }
    }

    /** Waits up to {@code seconds} for the process to end (killing it then); its exit status, or -1 if killed. */
    public int await(final long seconds) throws InterruptedException
    {
        if (!process.waitFor(seconds, TimeUnit.SECONDS))
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            return -1;
        }
        return process.exitValue();
    }

    /** What it printed so far. */
    public String output()
    {
        try
        {
            return Files.exists(log) ? Files.readString(log) : "";
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** Kills it if it still runs. */
    public void kill() throws InterruptedException
    {
        if (process.isAlive())
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
