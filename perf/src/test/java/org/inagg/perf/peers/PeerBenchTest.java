package org.inagg.perf.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The table, skip and failure logic of bench-peers, with stand-in peers (no torch or MPI needed). */
class PeerBenchTest
{
    @TempDir
    Path dir;

    @Test
    void shouldGiveRatiosToTheBaselineAtTheSameWorldSize()
    {
        final PeerTable table = new PeerTable(List.of(
            PeerResult.measured("gloo", 2, 2.0e8, ""), PeerResult.measured("inagg", 2, 1.0e8, ""),
            PeerResult.measured("gloo", 4, 1.0e8, ""), PeerResult.measured("inagg", 4, 2.5e7, "")), "gloo");

        assertThat(table.ratioToBaseline("inagg", 2)).hasValue(0.5);
        assertThat(table.ratioToBaseline("inagg", 4)).hasValue(0.25);
        assertThat(table.ratioToBaseline("gloo", 4)).hasValue(1.0);
        assertThat(table.format("t")).contains("1.000e+08 (0.500x gloo)").contains("2.500e+07 (0.250x gloo)");
    }

    @Test
    void shouldShowTheCpuPerAllReducePerMibAndAgainstTheBaselineWhereReported()
    {
        final PeerTable table = new PeerTable(List.of(
            PeerResult.measured("gloo", 2, 2.0e8, "").withCpuSecondsPerOp(0.030),
            PeerResult.measured("inagg", 2, 1.0e8, "").withCpuSecondsPerOp(0.060),
            PeerResult.measured("mpi", 2, 1.0e9, ""),
            PeerResult.failed("gloo", 4, "timeout"),
            PeerResult.measured("inagg", 4, 5.0e7, "").withCpuSecondsPerOp(0.150)), "gloo", 16L << 20);

        assertThat(table.cpuRatioToBaseline("inagg", 2)).hasValue(2.0);
        assertThat(table.cpuRatioToBaseline("mpi", 2)).isEmpty();
        assertThat(table.cpuRatioToBaseline("inagg", 4)).isEmpty();
        assertThat(table.format("t")).contains("CPU per all-reduce")
            .contains("30.0 ms (1.88 ms/MiB, 1.00x)").contains("60.0 ms (3.75 ms/MiB, 2.00x)")
            .contains("150.0 ms (9.38 ms/MiB)");
        assertThat(new PeerTable(List.of(PeerResult.measured("gloo", 2, 2.0e8, "")), "gloo").format("t"))
            .doesNotContain("CPU per all-reduce");
    }

    @Test
    void shouldDrawTheCpuChartBesideTheRatesOnlyWhereAPeerReportedIt() throws Exception
    {
        final Path rates = dir.resolve("peers.png");
        assertThat(PeerChart.cpuFileBeside(rates)).isEqualTo(dir.resolve("peers-cpu.png"));
        assertThat(PeerChart.cpuFileBeside(dir.resolve("chart"))).isEqualTo(dir.resolve("chart-cpu.png"));

        final PeerTable with = new PeerTable(List.of(
            PeerResult.measured("gloo", 2, 2.0e8, "").withCpuSecondsPerOp(0.030),
            PeerResult.measured("inagg", 2, 1.0e8, "")), "gloo");
        assertThat(PeerChart.writeCpu(with, "cpu", dir.resolve("with-cpu.png"))).isTrue();
        assertThat(Files.size(dir.resolve("with-cpu.png"))).isPositive();

        final PeerTable without = new PeerTable(List.of(PeerResult.measured("gloo", 2, 2.0e8, "")), "gloo");
        assertThat(PeerChart.writeCpu(without, "cpu", dir.resolve("without-cpu.png"))).isFalse();
        assertThat(dir.resolve("without-cpu.png")).doesNotExist();
    }

    @Test
    void shouldReadTheCpuLineOfAPeersScript()
    {
        assertThat(ChildProcesses.cpuSecondsPerCall("elements/s 1e8\np50 ms 3.000\ncpu ms 29.250\nresult ok\n"))
            .isEqualTo(0.02925);
        assertThat(ChildProcesses.cpuSecondsPerCall("elements/s 1e8\nresult ok\n")).isNaN();
    }

    @Test
    void shouldGiveNoRatioWhenTheBaselineWasNotMeasured()
    {
        final PeerTable table = new PeerTable(List.of(
            PeerResult.skipped("gloo", 2, "no torch"), PeerResult.measured("inagg", 2, 1.0e8, "")), "gloo");

        assertThat(table.ratioToBaseline("inagg", 2)).isEmpty();
        assertThat(table.format("t")).contains("1.000e+08").doesNotContain("x gloo)").contains("skipped");
    }

    @Test
    @Timeout(60)
    void shouldNameAndSkipAMissingPeerAtEveryWorldSizeAndStillRunTheOthers() throws Exception
    {
        final List<Integer> runs = new ArrayList<>();
        final Peer missing = new StandIn("missing", "not installed: apt-get install it", runs, 0);
        final Peer present = new StandIn("present", null, runs, 3.0e7);
        final List<PeerResult> progress = new ArrayList<>();

        final List<PeerResult> results = new PeerBench(List.of(missing, present)).run(List.of(2, 4), 1024, 3, 1, 10,
            dir, progress::add);

        assertThat(results).hasSize(4).isEqualTo(progress);
        assertThat(results).filteredOn(r -> r.peer().equals("missing"))
            .allSatisfy(r -> assertThat(r.status()).isEqualTo(PeerResult.Status.SKIPPED))
            .allSatisfy(r -> assertThat(r.note()).isEqualTo("not installed: apt-get install it"));
        assertThat(runs).containsExactly(2, 4);
        final String text = new PeerTable(results, "gloo").format("heading");
        assertThat(text).contains("missing, 2 ranks: skipped: not installed").contains("missing, 4 ranks: skipped");
    }

    @Test
    @Timeout(60)
    void shouldRecordAPeerThatThrowsAsFailedAndGoOn() throws Exception
    {
        final Peer broken = new Peer()
        {
            @Override
            public String name()
            {
                return "broken";
            }

            @Override
            public String unavailableReason()
            {
                return null;
            }

            @Override
            public PeerResult run(final PeerRun run)
            {
                throw new IllegalStateException("boom at " + run.workers());
            }
        };

        final List<PeerResult> results = new PeerBench(List.of(broken)).run(List.of(2, 3), 1024, 1, 0, 10, dir,
            r -> { });

        assertThat(results).extracting(PeerResult::status).containsOnly(PeerResult.Status.FAILED);
        assertThat(results).extracting(PeerResult::note).containsExactly("boom at 2", "boom at 3");
    }

    @Test
    @Timeout(60)
    void shouldSayWhyGlooAndMpiCannotRunWithoutTheirPython() throws Exception
    {
        final String python = dir.resolve("no-such-python").toString();

        assertThat(new GlooPeer(python).unavailableReason()).contains(python).contains("pip install torch");
        final String mpi = new OpenMpiPeer(python).unavailableReason();
        if (!ChildProcesses.onPath("mpirun"))
        {
            assertThat(mpi).contains("mpirun");
        }
    }

    @Test
    void shouldReadTheFiguresEveryPeerPrints()
    {
        assertThat(ChildProcesses.elementsPerSecond("x\nelements/s 2.5e+08\n")).hasValue(2.5e8);
        assertThat(ChildProcesses.elementsPerSecond("  elements/s (tensor)        9.082e+07\n")).hasValue(9.082e7);
        assertThat(ChildProcesses.elementsPerSecond("  elements/s             1.497e+06\n")).hasValue(1.497e6);
        assertThat(ChildProcesses.elementsPerSecond("Traceback: no figure")).isEmpty();
        assertThat(ChildProcesses.lastLine("a\nb\n\n")).isEqualTo("b");
    }

    @Test
    void shouldWriteAChartOfTheMeasuredPeers() throws Exception
    {
        final PeerTable table = new PeerTable(List.of(
            PeerResult.measured("gloo", 2, 2.0e8, ""), PeerResult.skipped("Open MPI", 2, "none"),
            PeerResult.measured("inagg", 2, 4.0e6, ""), PeerResult.failed("inagg", 4, "timeout"),
            PeerResult.measured("gloo", 4, 1.0e8, "")), "gloo");
        final Path png = dir.resolve("peers.png");

        PeerChart.write(table, "test", png);

        assertThat(png).exists();
        final byte[] head = Files.readAllBytes(png);
        assertThat(head[1]).isEqualTo((byte)'P'); // \x89PNG
        assertThat(head[2]).isEqualTo((byte)'N');
    }

    /** A peer that is missing (a reason) or measures a fixed figure, recording the world sizes it ran at. */
    private record StandIn(String name, String unavailableReason, List<Integer> runs, double rate) implements Peer
    {
        @Override
        public PeerResult run(final PeerRun run)
        {
            runs.add(run.workers());
            return PeerResult.measured(name, run.workers(), rate, "stand-in");
        }
    }
}
