package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

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
 * {@code inagg bench-peers --link-rate} on a small emulated cluster (3 hosts, 50 Mbit/s, a small tensor): gloo (one
 * rank per host over TCP), Open MPI across the namespaces and inagg's switch + worker processes each run, check their
 * sums ("result ok" / "within bound") and are measured beside their bound; the table and the chart are written and no
 * namespace is left. gloo needs torch and Open MPI mpirun: required in CI ({@code -Dinagg.cluster.tests.require=true}).
 */
@Timeout(value = 400, unit = TimeUnit.SECONDS)
class ClusterPeersTest
{
    @TempDir
    Path dir;

    @Test
    void shouldMeasureEveryPeerBesideItsBound()
    {
        EmulatedClusterTest.requireCluster();
        final List<String> before = HostNetwork.listNamespaces();
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setOut(new PrintWriter(out));
        final Path png = dir.resolve("cluster.png");
        final String peers = Boolean.getBoolean("inagg.cluster.tests.require") ? "gloo,mpi,inagg-udp,inagg-local"
            : "inagg-udp,inagg-local";

        final int exit = commandLine.execute("bench-peers", "-w", "3", "-n", "65536", "-i", "3", "--warmup", "1",
            "--link-rate", "50mbit", "--peers", peers, "--chart", png.toString(), "--work-dir",
            dir.resolve("logs").toString(), "--timeout-s", "120");

        final String text = out.toString();
        assertThat(exit).as(text).isZero();
        // ... and last the CPU of all its processes per all-reduce.
        assertThat(text).containsPattern("(?m)inagg UDP processes +3 +50 Mbit/s( +[0-9.]+){5} +(-|[0-9.]+x) +[0-9.]+$")
            .containsPattern("inagg local \\(one JVM\\) +3 +50 Mbit/s +skipped")
            .contains("runs on one host only");
        if (peers.startsWith("gloo"))
        {
            // mean ms, p50 ms, bound ms, of bound, p50 of bound, ratio to gloo: every peer reports its median too
            assertThat(text).containsPattern("(?m)gloo +3 +50 Mbit/s( +[0-9.]+){5} +1.00x +[0-9.]+$")
                .containsPattern("Open MPI +3 +50 Mbit/s( +[0-9.]+){5} +[0-9.]+x")
                .containsPattern("inagg UDP processes +3 +50 Mbit/s( +[0-9.]+){5} +[0-9.]+x");
        }
        assertThat(png).exists();
        assertThat(HostNetwork.listNamespaces()).isEqualTo(before);
    }

    @Test
    void shouldRunTheTwoLevelJobOnALeafSpineFabric()
    {
        EmulatedClusterTest.requireCluster();
        final List<String> before = HostNetwork.listNamespaces();
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setOut(new PrintWriter(out));
        final String peers = Boolean.getBoolean("inagg.cluster.tests.require") ? "gloo,inagg-udp,inagg-2level"
            : "inagg-udp,inagg-2level";

        final int exit = commandLine.execute("bench-peers", "-w", "4", "-n", "65536", "-i", "3", "--warmup", "1",
            "--link-rate", "50mbit", "--leaves", "2", "--uplink-rate", "100mbit", "--peers", peers, "--chart", "none",
            "--work-dir", dir.resolve("logs").toString(), "--timeout-s", "120");

        final String text = out.toString();
        assertThat(exit).as(text).isZero();
        assertThat(text).contains("leaf-spine fabrics of 2 leaves")
            .containsPattern("inagg UDP processes +4 +50 Mbit/s +[0-9.]+ +[0-9.]+ +[0-9.]+ ")
            .containsPattern("inagg two-level \\(leaf switches \\+ PS\\) +4 +50 Mbit/s +[0-9.]+ +[0-9.]+ +[0-9.]+ ");
        assertThat(HostNetwork.listNamespaces()).isEqualTo(before);
    }

    @Test
    void shouldRefuseATwoLevelRunWithoutAFabricOption()
    {
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = RefusingCli.printingErrorsTo(err);
        assertThat(commandLine.execute("bench-peers", "--leaves", "2", "--chart", "none")).isEqualTo(1);
        assertThat(err.toString()).contains("--leaves and --uplink-rate need --link-rate");
        assertThat(commandLine.execute("bench-peers", "-w", "3", "--link-rate", "1gbit", "--leaves", "4", "--chart",
            "none")).isEqualTo(1);
        assertThat(err.toString()).contains("--leaves 4");
    }
}
