package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.perf.cli.RefusingCli.refusal;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.lab.EmulatedClusterTest;
import org.inagg.perf.lab.HostNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Path-aware multicast on a routed fabric ({@code inagg bench-multicast}): two jobs at once on the example's two
 * spines and three leaves, along the colliding random trees and the path-aware ones, every worker's result within
 * the fixed-point bound, nothing left; bad jobs and topologies named before anything is made. Root (required in CI
 * with {@code -Dinagg.cluster.tests.require=true}); tiny tensors.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class MulticastFabricClusterTest
{
    private static final String EXAMPLE = Path.of("..", "control", "examples", "multicast-two-spines.json")
        .toString();

    @TempDir
    Path dir;

    @Test
    void shouldRunBothCasesOfTwoJobsOnTheFabricAndLeaveNothing()
    {
        EmulatedClusterTest.requireCluster();
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setOut(new PrintWriter(out));
        final int exit = commandLine.execute("bench-multicast", "--topology", EXAMPLE, "--job", "PS1=W1,W2", "--job",
            "PS2=W3,W4", "--per-gbps", "20mbit", "-n", "20000", "-i", "2", "--warmup", "1", "--rounds", "1",
            "--timeout-s", "150", "--work-dir", dir.toString(), "--jvm-option", "-Xmx96m", "--worker-option",
            "--retransmit-us=50000");
        final String text = out.toString();
        assertThat(exit).as(text).isZero();
        assertThat(text).contains("random: the colliding draw").contains("(4 streams)")
            .containsPattern("round 1 random job 1: mean [0-9.]+ ms").containsPattern("round 1 path-aware job 2: mean")
            .containsPattern("\\| path-aware \\| 2 \\(PS2\\) \\| SP[12] \\|").contains("| 2.00x |")
            .contains("fabric removed (0 namespaces left)");
        final String pid = Long.toString(ProcessHandle.current().pid());
        assertThat(HostNetwork.listNamespaces()).noneMatch(name -> name.matches("inagg-" + pid + "[a-z]+-.*"));
    }

    @Test
    void shouldNameABadJobOrTopologyAndCreateNothing()
    {
        final List<String> before = HostNetwork.listNamespaces();
        assertThat(refusal("bench-multicast", "--topology", EXAMPLE, "--job", "PS1=W1,W2", "--job", "PS2=W3,W9"))
            .contains("unknown node 'W9'");
        assertThat(refusal("bench-multicast", "--topology", EXAMPLE, "--job", "PS1=W1,W2"))
            .contains("give --job twice");
        final String grid = Path.of("..", "control", "examples", "grid-example.json").toString();
        assertThat(refusal("bench-multicast", "--topology", grid, "--job", "PS=W1", "--job", "PS=W2"))
            .contains("0 spine(s)");
        assertThat(refusal("bench-multicast", "--topology", EXAMPLE, "--job", "PS1=W1,W2", "--job", "PS2=W3,W4",
            "--per-gbps", "fast")).contains("'fast'");
        assertThat(HostNetwork.listNamespaces()).isEqualTo(before);
    }
}
