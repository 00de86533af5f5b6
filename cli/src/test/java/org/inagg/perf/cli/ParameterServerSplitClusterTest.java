package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.lab.EmulatedClusterTest;
import org.inagg.perf.peers.ParameterServerSplitBench;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * InArt's several parameter servers on an emulated cluster ({@code inagg bench-ps-split}): the tensor split between
 * two {@code inagg ps} behind their own links, each with its first-level {@code inagg switch --upstream}, every
 * worker's result within the fixed-point bound, nothing left. Root (required in CI with
 * {@code -Dinagg.cluster.tests.require=true}); tiny tensors.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ParameterServerSplitClusterTest
{
    @TempDir
    Path dir;

    @Test
    void shouldSplitTheTensorEvenlyBetweenServers()
    {
        assertThat(ParameterServerSplitBench.evenSplit(10, 1)).containsExactly(10);
        assertThat(ParameterServerSplitBench.evenSplit(11, 2)).containsExactly(6, 5);
        assertThat(ParameterServerSplitBench.evenSplit(9, 4)).containsExactly(3, 2, 2, 2);
    }

    @Test
    void shouldRunOneAndTwoParameterServersOnAnEmulatedClusterAndLeaveNothing()
    {
        EmulatedClusterTest.requireCluster();
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setOut(new PrintWriter(out));
        final int exit = commandLine.execute("bench-ps-split", "--workers", "2", "--link-rate", "50mbit",
            "--ps-rate", "20mbit", "-n", "20000", "-i", "2", "--rounds", "1", "--timeout-s", "120", "--work-dir",
            dir.toString(), "--jvm-option", "-Xmx128m");
        assertThat(exit).as(out.toString()).isZero();
        assertThat(out.toString()).contains("4 hosts").containsPattern("\\| 1 \\| \\[20000\\] \\|")
            .containsPattern("\\| 2 \\| \\[10000, 10000\\] \\|")
            .contains("cluster removed (0 namespaces"); // its own count: other clusters come and go on this machine
    }

    @Test
    void shouldRefuseBadServerCounts()
    {
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = RefusingCli.printingErrorsTo(err);
        assertThat(commandLine.execute("bench-ps-split", "--link-rate", "10mbit", "--servers", "0,2")).isEqualTo(1);
        assertThat(err.toString()).contains("--servers must be 1..8 each");
        assertThat(commandLine.execute("bench-ps-split", "--link-rate", "fast")).isEqualTo(1);
        assertThat(err.toString()).contains("fast");
    }
}
