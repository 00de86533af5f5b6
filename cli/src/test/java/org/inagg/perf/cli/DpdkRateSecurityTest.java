package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@code inagg dpdk-rate} checks its options before any child starts, naming the option, and never waits on a child
 * for longer than {@code --child-timeout-s}: one that outlives it is killed (issue 24).
 */
class DpdkRateSecurityTest
{
    /** Runs {@code inagg dpdk-rate ARGS...} in this JVM with every part skipped; returns its stderr. */
    private static String refused(final String... args)
    {
        final StringWriter err = new StringWriter();
        final CommandLine line = new CommandLine(new DpdkRateCommand());
        line.setErr(new PrintWriter(err));
        line.setOut(new PrintWriter(new StringWriter()));
        line.setExecutionExceptionHandler((ex, cmd, parsed) ->
        {
            cmd.getErr().println("inagg: " + ex.getMessage());
            return 2;
        });
        final String[] all = java.util.stream.Stream.concat(java.util.Arrays.stream(args),
            java.util.stream.Stream.of("--skip", "raw,build,memif")).toArray(String[]::new);
        final int code = line.execute(all);
        assertThat(code).as(err.toString()).isNotZero();
        return err.toString();
    }

    @Test
    void shouldRefuseOptionsOutOfRangeNamingTheOption()
    {
        assertThat(refused("--seconds", "0")).contains("--seconds must be in 1..3600, got 0");
        assertThat(refused("--warmup", "-1")).contains("--warmup must be in 0..3600, got -1");
        assertThat(refused("--rounds", "0")).contains("--rounds must be in 1..1000, got 0");
        assertThat(refused("-w", "0")).contains("-w/--workers must be in 1..64, got 0");
        assertThat(refused("-n", "-5")).contains("-n/--elements must be in 1..").contains("got -5");
        assertThat(refused("--lanes", "100000")).contains("--lanes must be in 1..").contains("got 100000");
        assertThat(refused("--cpu", "100000")).contains("--cpu must be in -1..").contains("got 100000");
        assertThat(refused("--child-timeout-s", "0")).contains("--child-timeout-s must be in 1..").contains("got 0");
    }

    @Test
    void shouldRefuseAnUnknownPartToSkip()
    {
        assertThat(refused("--skip", "rwa")).contains("--skip: unknown part 'rwa' (the parts are raw, build, memif)");
    }

    @Test
    @Timeout(60)
    void shouldKillAChildThatOutlivesTheTimeoutAndSaySo() throws Exception
    {
        final Process child = new ProcessBuilder(List.of("sleep", "300")).start();
        try
        {
            assertThatThrownBy(() -> DpdkRateCommand.awaitOrKill(child, 1, "the raw harness"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the raw harness did not end within 1 s (--child-timeout-s); killed");
            assertThat(child.isAlive()).isFalse();
        }
        finally
        {
            child.destroyForcibly();
        }
    }

    @Test
    @Timeout(60)
    void shouldReturnTheExitCodeOfAChildThatEndsInTime() throws Exception
    {
        assertThat(DpdkRateCommand.awaitOrKill(new ProcessBuilder(List.of("sh", "-c", "exit 3")).start(), 30,
            "a child")).isEqualTo(3);
    }
}
