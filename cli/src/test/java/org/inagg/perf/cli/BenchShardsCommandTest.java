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
 * {@code inagg bench-shards} end to end on a small tensor: two jobs of worker processes on an {@code inagg switch} of
 * one shard, then of four (each job on its own thread and socket), every result checked by its workers; and the bad
 * counts refused before anything starts.
 */
class BenchShardsCommandTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(300)
    void shouldRunTwoJobsOnOneShardAndOnFourAndTabulateBoth()
    {
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = new CommandLine(new InaggCli());
        commandLine.setOut(new PrintWriter(out));

        final int exit = commandLine.execute("bench-shards", "--jobs", "2", "-w", "1", "--shards", "1,4",
            "-n", "20000", "-i", "2", "--warmup", "1", "--rounds", "1", "--work-dir", dir.toString(),
            "--timeout-s", "200");

        final String text = out.toString();
        assertThat(exit).as(text).isZero();
        assertThat(text)
            .containsPattern("\\| 1 \\| 2 \\| 1 \\| [0-9.]+ / [0-9.]+ \\| [0-9.]+e\\+[0-9]+ \\| 1\\.00x \\|")
            .containsPattern("\\| 1 \\| 2 \\| 4 \\| [0-9.]+ / [0-9.]+ \\| [0-9.]+e\\+[0-9]+ \\| [0-9.]+x \\|");
        // Four shards' counters fit its counters file.
        assertThat(dir.resolve("switch-j2-s4.log")).content()
            .contains("shards: 4 threads").contains("job 1 on shard 1, job 2 on shard 2");
    }

    @Test
    void shouldRefuseCountsOutsideTheirRange()
    {
        assertThat(RefusingCli.refusal("bench-shards", "--shards", "0,2")).contains("--jobs and --shards take counts in"
            + " 1..64");
        assertThat(RefusingCli.refusal("bench-shards", "--jobs", "65")).contains("1..64");
        assertThat(RefusingCli.refusal("bench-shards", "-w", "0")).contains("must be positive");
    }
}
