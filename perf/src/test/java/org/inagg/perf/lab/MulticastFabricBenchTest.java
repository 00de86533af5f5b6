package org.inagg.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;

import org.inagg.perf.peers.PeerResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How {@code bench-multicast} tells runs where the two jobs shared the fabric from runs where one was timed alone. */
class MulticastFabricBenchTest
{
    @TempDir
    Path dir;

    @Test
    void shouldTakeAJobsTimedWindowFromItsWorkersLogs() throws Exception
    {
        final Path first = worker("a.log", 10.5, 100_000);
        final Path second = worker("b.log", 10.0, 101_000);
        assertThat(MulticastFabricBench.timedWindow(List.of(first, second))).containsExactly(89_500, 101_000);
        final Path failed = dir.resolve("c.log");
        Files.writeString(failed, "worker 1: timed out\n");
        assertThat(MulticastFabricBench.timedWindow(List.of(first, failed))[0]).isNaN();
    }

    @Test
    void shouldMeasureHowMuchOfAJobsTimedWindowTheOtherJobRan()
    {
        // job 0 timed 10..20 s, job 1 timed 0..10 s and gone at 10 s: job 1 fully beside job 0, job 0 alone
        final double[][] windows = {{10_000, 20_000}, {0, 10_000}};
        assertThat(MulticastFabricBench.overlap(windows, 1, 0)).isEqualTo(1.0);
        assertThat(MulticastFabricBench.overlap(windows, 0, 0)).isEqualTo(0.0);
        final double[][] half = {{10_000, 20_000}, {5_000, 15_000}};
        assertThat(MulticastFabricBench.overlap(half, 0, 0)).isCloseTo(0.5, within(1e-12));
        // the other job's workers only started at 12 s: it ran during 8 of job 0's 10 s
        assertThat(MulticastFabricBench.overlap(new double[][] {{10_000, 20_000}, {15_000, 25_000}}, 0, 12_000))
            .isCloseTo(0.8, within(1e-12));
        assertThat(MulticastFabricBench.overlap(new double[][] {{Double.NaN, Double.NaN}, {0, 1}}, 0, 0)).isNaN();
    }

    @Test
    void shouldLeaveRunsWhereAJobWasTimedAloneOutOfTheMedians()
    {
        final List<MulticastCases.Job> jobs = List.of(MulticastCases.Job.parse("PS1=W1,W2"),
            MulticastCases.Job.parse("PS2=W3,W4"));
        final MulticastFabricBench.Settings settings = new MulticastFabricBench.Settings(
            MulticastCasesTest.twoSpines(Double.POSITIVE_INFINITY).build(), jobs, LinkRate.parse("1mbit"), 16,
            262_144, 5, 1, 2, 60, dir, List.of(), List.of());
        final List<MulticastCases.Case> cases = MulticastFabricBench.plan(settings);
        final MulticastFabricBench.Run alone = run(2000, 4000, new double[] {0.0, 1.0});
        final MulticastFabricBench.Run together = run(4000, 4000, new double[] {1.0, 0.95});
        final MulticastFabricBench.Run apart = run(2000, 2000, new double[] {1.0, 1.0});
        final String table = MulticastFabricBench.table(settings, cases, Map.of("random", List.of(alone, together),
            "path-aware", List.of(apart)));
        assertThat(table).contains("| random | 1 (PS1) |").contains("| 4000.0 (2000.0*, 4000.0) |")
            .contains("* a run in which some job ran less than 90 %").contains("| 1 (PS1) | 2.00x | 2.00x | 2.00x |");
    }

    private static MulticastFabricBench.Run run(final double ms0, final double ms1, final double[] overlap)
    {
        return new MulticastFabricBench.Run(List.of(result(ms0), result(ms1)), overlap);
    }

    private static PeerResult result(final double ms)
    {
        return PeerResult.measured("job", 2, 262_144 / (ms / 1e3), ms / 1e3, "");
    }

    private Path worker(final String name, final double seconds, final long writtenMs) throws Exception
    {
        final Path log = dir.resolve(name);
        Files.writeString(log, "  time                   " + seconds + " s for 5 all-reduces of 262,144 elements\n");
        Files.setLastModifiedTime(log, FileTime.fromMillis(writtenMs));
        return log;
    }
}
