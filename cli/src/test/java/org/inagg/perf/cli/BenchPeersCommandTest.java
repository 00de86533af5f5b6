package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code inagg bench-peers} end to end on a small tensor: inagg's process path (a switch and two worker JVMs over
 * loopback UDP) and {@code inagg local} really run and report their CPU per all-reduce (a table and a chart), and a
 * peer whose Python is missing is named and skipped, whether or not this machine has torch.
 */
class BenchPeersCommandTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(300)
    void shouldMeasureTheProcessPathAndNameTheSkippedPeer()
    {
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setOut(new PrintWriter(out));
        final Path png = dir.resolve("peers.png");

        final int exit = commandLine.execute("bench-peers", "-w", "2", "-n", "20000", "-i", "2", "--warmup", "1",
            "--peers", "gloo,inagg-udp,inagg-local", "--python", dir.resolve("no-python").toString(), "--chart",
            png.toString(), "--work-dir", dir.resolve("logs").toString(), "--timeout-s", "200");

        final String text = out.toString();
        assertThat(exit).as(text).isZero();
        assertThat(text).contains("gloo, 2 ranks: skipped: " + dir.resolve("no-python"))
            .containsPattern("inagg UDP processes +\\| [0-9.]+e\\+[0-9]+ ")
            .contains("retransmissions")
            // The CPU of the switch and both workers over the timed all-reduces, from the lines each printed.
            .contains("CPU per all-reduce, all of a peer's processes")
            .containsPattern("inagg UDP processes +\\| [0-9.]+ ms \\([0-9.]+ ms/MiB\\)")
            .containsPattern("CPU per all-reduce [0-9.]+ ms: workers [0-9.]+, switch [0-9.]+")
            .containsPattern("inagg local \\(one JVM\\) +\\| [0-9.]+ ms \\([0-9.]+ ms/MiB\\)");
        assertThat(png).exists();
        assertThat(dir.resolve("peers-cpu.png")).exists();
        assertThat(text).contains("chart: " + dir.resolve("peers-cpu.png").toAbsolutePath());
    }

    @Test
    @Timeout(300)
    void shouldProfileEveryInaggProcessIntoAFlameGraphAndASummary() throws java.io.IOException
    {
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setOut(new PrintWriter(out));
        final Path profiles = dir.resolve("profiles");

        // Enough timed all-reduces that each category asserted below gets samples on a loaded machine too (3 after 1
        // warm-up once gave the JIT nearly all of them and no send).
        final int exit = commandLine.execute("bench-peers", "-w", "2", "-n", "65536", "-i", "12", "--warmup", "3",
            "--peers", "inagg-udp", "--chart", "none", "--profile", profiles.toString(),
            "--work-dir", dir.resolve("logs").toString(), "--timeout-s", "200");

        final String text = out.toString();
        assertThat(exit).as(text).isZero();
        // Every process of the run wrote its stacks at exit, the switch too (stopped with SIGTERM, not SIGKILL).
        try (var files = java.nio.file.Files.list(profiles))
        {
            assertThat(files.map(f -> f.getFileName().toString()).toList())
                .filteredOn(name -> name.endsWith(".html"))
                .hasSize(3)
                .anyMatch(name -> name.matches("switch-\\d+\\.html"))
                .filteredOn(name -> name.startsWith("worker-")).hasSize(2);
        }
        assertThat(profiles.resolve("summary.md")).exists();
        assertThat(text).contains("| where | switch x1: CPU ms |").contains("worker x2: CPU ms")
            .contains("| quantize |").contains("| send (system call) |").contains("flame graphs: ");
    }

    @Test
    void shouldRefuseAProfileFolderThatHoldsProfiles() throws java.io.IOException
    {
        final Path profiles = java.nio.file.Files.createDirectories(dir.resolve("old"));
        java.nio.file.Files.writeString(profiles.resolve("worker-1.collapsed"), "");
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = RefusingCli.printingErrorsTo(err);

        assertThat(commandLine.execute("bench-peers", "--peers", "inagg-udp", "--chart", "none", "--profile",
            profiles.toString())).isEqualTo(1);
        assertThat(err.toString()).contains("--profile " + profiles + " already holds profiles");
    }

    @Test
    void shouldRefuseAnUnknownPeer()
    {
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = RefusingCli.printingErrorsTo(err);

        assertThat(commandLine.execute("bench-peers", "--peers", "nccl", "--chart", "none")).isEqualTo(1);
        assertThat(err.toString()).contains("unknown peer 'nccl'").contains("gloo,mpi");
    }
}
