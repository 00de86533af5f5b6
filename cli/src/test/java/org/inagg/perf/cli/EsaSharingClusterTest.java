package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.lab.EmulatedClusterTest;
import org.inagg.perf.peers.EsaSharingBench;
import org.inagg.perf.peers.EsaSharingBench.Scheme;
import org.inagg.perf.peers.Placement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * ESA's seed on real processes ({@code inagg bench-esa}, {@link EsaSharingBench}): two jobs of unmodified
 * {@code inagg worker}s sharing one {@code inagg esa-switch}'s pool with their {@code inagg ps} servers, every result
 * within the fixed-point bound under each scheme, on loopback (anywhere) and on an emulated cluster (root; required in
 * CI with {@code -Dinagg.cluster.tests.require=true}). Tiny tensors: seconds, not a measurement.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class EsaSharingClusterTest
{
    @TempDir
    Path dir;

    @Test
    void shouldFinishBothJobsExactlyUnderEverySchemeOnLoopback() throws Exception
    {
        final EsaSharingBench bench = new EsaSharingBench(new EsaSharingBench.Settings(Placement.LOOPBACK, 2, 4096, 2,
            8192, 3, 4, 4, 1, dir, 90, List.of("-Xmx128m")));
        final List<EsaSharingBench.Result> results = bench.run(List.of(Scheme.values()), 1);
        assertThat(results).hasSize(Scheme.values().length);
        for (final EsaSharingBench.Result result : results)
        {
            assertThat(result.ok()).as(result.scheme() + ": " + result.failure()).isTrue();
            assertThat(result.highSeconds()).isPositive();
            if (result.scheme() != Scheme.ALONE)
            {
                assertThat(result.lowSeconds()).isPositive();
            }
        }
        assertThat(EsaSharingBench.table(results)).contains("| ESA: shared pool, priorities 200 / 10, preemption |")
            .contains("| high-priority job alone on the ESA switch |").contains("| 1.00x |");
    }

    @Test
    void shouldRunBothJobsOnAnEmulatedClusterAndLeaveNothing()
    {
        EmulatedClusterTest.requireCluster();
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setOut(new PrintWriter(out));
        final int exit = commandLine.execute("bench-esa", "--link-rate", "50mbit", "--ps-rate", "20mbit",
            "--high-elements", "8192", "--high-iterations", "2", "--low-elements", "16384", "--low-iterations", "3",
            "--aggregators", "4", "--window", "4", "--schemes", "esa,static", "--rounds", "1", "--timeout-s", "120",
            "--work-dir", dir.toString(), "--jvm-option", "-Xmx128m");
        assertThat(exit).as(out.toString()).isZero();
        assertThat(out.toString()).contains("5 hosts").contains("parameter servers on host 5")
            .contains("| static partition: half the pool each (SwitchML) |")
            .contains("cluster removed (0 namespaces"); // its own count: other clusters come and go on this machine
    }

    @Test
    void shouldRefuseBadInputBeforeAnythingStarts()
    {
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = RefusingCli.printingErrorsTo(err);
        assertThat(commandLine.execute("bench-esa", "--schemes", "esa,lifo")).isEqualTo(1);
        assertThat(err.toString()).contains("unknown scheme 'lifo'");
        assertThat(commandLine.execute("bench-esa", "--ps-rate", "10mbit")).isEqualTo(1);
        assertThat(err.toString()).contains("--ps-rate needs --link-rate");
        assertThat(commandLine.execute("bench-esa", "--aggregators", "1")).isEqualTo(1);
        assertThat(err.toString()).contains("aggregators (at least 2)");
        assertThat(commandLine.execute("esa-switch", "--job", "1:2:8", "--source", "1:0=127.0.0.1:1,1:1=127.0.0.1:2",
            "--server", "2=127.0.0.1:3")).isEqualTo(1);
        assertThat(err.toString()).contains("--server '2=127.0.0.1:3' names job 2, which no --job gives");
        assertThat(commandLine.execute("esa-switch", "--job", "1:2:8:256:300", "--source",
            "1:0=127.0.0.1:1,1:1=127.0.0.1:2", "--server", "1=127.0.0.1:3")).isEqualTo(1);
        assertThat(err.toString()).contains("priority must be in 0..255, got 300");
        assertThat(commandLine.execute("esa-switch", "--mode", "lru", "--job", "1:2:8", "--source",
            "1:0=127.0.0.1:1,1:1=127.0.0.1:2", "--server", "1=127.0.0.1:3")).isEqualTo(1);
        assertThat(err.toString()).contains("--mode must be esa or atp, not 'lru'");
        assertThat(commandLine.execute("esa-switch", "--job", "1:2:8", "--source", "1:0=127.0.0.1:1", "--server",
            "1=127.0.0.1:3")).isEqualTo(1);
        assertThat(err.toString()).contains("not those of worker(s) [1]");
        assertThatThrownBy(() -> Scheme.parse("")).hasMessageContaining("unknown scheme");
    }
}
