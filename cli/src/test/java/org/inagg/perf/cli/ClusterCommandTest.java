package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.lab.EmulatedClusterTest;
import org.inagg.perf.lab.HostNetwork;
import org.inagg.perf.lab.InaggProcess;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code inagg cluster} as a user runs it, in a child process: unmodified {@code inagg worker} processes on three
 * emulated hosts all-reduce through the software switch in the switch namespace over rate-limited links, each result
 * within the fixed-point bound; bad input is refused before anything is made; and nothing is left behind, also after
 * Ctrl-C mid-run. Required in CI ({@code -Dinagg.cluster.tests.require=true}).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ClusterCommandTest
{
    @TempDir
    Path dir;

    @BeforeEach
    void requireCluster()
    {
        EmulatedClusterTest.requireCluster();
    }

    /** The java command line of an inagg CLI process of this JVM's runtime and class path, for a shell. */
    private static String inagg()
    {
        return String.join(" ", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "--add-exports",
            "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx256m", "-XX:+UseSerialGC", "-cp",
            "'" + System.getProperty("java.class.path") + "'", InaggCli.class.getName());
    }

    @Test
    void shouldRunWorkersOnEveryHostThroughTheSoftwareSwitch() throws Exception
    {
        final String worker = inagg() + " worker --switch $INAGG_CLUSTER_SWITCH --bind $INAGG_CLUSTER_IP:9101"
            + " --worker-id $INAGG_CLUSTER_RANK -w $INAGG_CLUSTER_HOSTS -n 100000 -i 2 --no-progress";
        final InaggProcess run = InaggProcess.start(List.of(), dir.resolve("cluster.log"), List.of("cluster",
            "--hosts", "3", "--link-rate", "50mbit", "--host-rate", "2=20mbit", "--run", worker, "--timeout-s", "180",
            "--work-dir", dir.toString()));
        final int exit = run.await(200);
        final String output = run.output();
        assertThat(exit).as(output).isZero();
        assertThat(output).contains("cluster: 3 hosts").contains("host 2: 10.0.0.2, link 20 Mbit/s")
            .contains("--run ended with status 0").contains("cluster: removed (0 namespaces left)");
        for (int h = 1; h <= 3; h++)
        {
            assertThat(output).as(output).containsPattern("\\[h" + h + "\\] +within bound +yes");
        }
        assertNothingLeft(run, List.of());
    }

    @Test
    void shouldRemoveEverythingOnCtrlC() throws Exception
    {
        final InaggProcess run = InaggProcess.start(List.of(), dir.resolve("cluster.log"), List.of("cluster",
            "--hosts", "2", "--link-rate", "10mbit", "--work-dir", dir.toString()));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (run.process().isAlive() && !run.output().contains("cluster ready") && System.nanoTime() < deadline)
        {
            Thread.sleep(50);
        }
        assertThat(run.output()).contains("cluster ready");
        final List<ProcessHandle> seen = new ArrayList<>(run.process().descendants().toList());
        assertThat(seen).as("the switch process").isNotEmpty();
        new ProcessBuilder("kill", "-INT", Long.toString(run.process().pid())).start().waitFor();
        run.await(60);
        assertNothingLeft(run, seen);
    }

    @Test
    void shouldNameBadInputAndCreateNothing()
    {
        final List<String> before = HostNetwork.listNamespaces();
        assertThat(error("cluster", "--link-rate", "fast", "--run", "true")).contains("'fast'");
        assertThat(error("cluster", "--hosts", "3", "--host-rate", "7=10mbit", "--run", "true"))
            .contains("unknown host 7");
        assertThat(error("cluster", "--hosts", "201", "--run", "true")).contains("2..200");
        assertThat(error("cluster", "--switch", "tofino", "--run", "true")).contains("'tofino'");
        assertThat(error("cluster", "--workers-per-host", "0", "--run", "true")).contains("--workers-per-host");
        assertThat(error("cluster", "--uplink-rate", "1gbit", "--run", "true")).contains("--uplink-rate needs --leaves");
        assertThat(error("cluster", "--hosts", "3", "--leaves", "4", "--run", "true")).contains("one at least under");
        assertThat(HostNetwork.listNamespaces()).isEqualTo(before);
    }

    private static String error(final String... args)
    {
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setErr(new PrintWriter(err));
        commandLine.setOut(new PrintWriter(new StringWriter()));
        commandLine.setExecutionExceptionHandler((ex, cmd, parsed) ->
        {
            cmd.getErr().println(ex.getMessage());
            return 1;
        });
        assertThat(commandLine.execute(args)).isEqualTo(1);
        return err.toString();
    }

    private static void assertNothingLeft(final InaggProcess run, final List<ProcessHandle> seen) throws Exception
    {
        final long pid = run.process().pid();
        assertThat(HostNetwork.listNamespaces()).as("namespaces of the run (pid %d):%n%s", pid, run.output())
            .noneMatch(name -> name.startsWith("inagg-" + pid));
        Thread.sleep(300);
        for (final ProcessHandle process : seen)
        {
            assertThat(process.isAlive()).as("process %d (%s) still running", process.pid(),
                process.info().commandLine().orElse("?")).isFalse();
        }
        assertThat(Files.exists(run.log())).isTrue();
    }
}
