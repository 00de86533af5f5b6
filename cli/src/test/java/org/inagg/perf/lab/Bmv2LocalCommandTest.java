package org.inagg.perf.lab;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code inagg local --switch bmv2} as a user runs it, in a child process: it completes with the result check, the
 * rates through bmv2 and through the software switch (same workers, hosts and veths) and their bit-identity, and leaves nothing behind (no namespaces, no simple_switch, no worker
 * processes), also when the job cannot be programmed and when it is interrupted with Ctrl-C (SIGINT) mid-run.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class Bmv2LocalCommandTest
{
    private static final Pattern SWITCH_PID = Pattern.compile("simple_switch pid (\\d+)");

    @TempDir
    Path dir;

    @BeforeEach
    void requireBmv2()
    {
        final String why = Bmv2EndToEndTest.unavailableReason();
        if (why != null)
        {
            if (Boolean.getBoolean("inagg.bmv2.tests.require"))
            {
                Assertions.fail("bmv2 tests are required here (-Dinagg.bmv2.tests.require=true) but " + why);
            }
            Assumptions.abort("skipped: " + why);
        }
    }

    @Test
    void shouldRunAJobThroughBmv2AndCompareItWithTheSoftwareSwitch() throws Exception
    {
        final Run run = start("local", "--switch", "bmv2", "-w", "2", "-n", "3000", "--no-progress");
        final List<ProcessHandle> seen = run.awaitLine("programmed");
        final int exit = run.process().await(180);
        final String output = run.process().output();
        assertThat(exit).as(output).isZero();
        assertThat(output).contains("within the fixed-point bound of docs/protocol.md: yes")
            .containsPattern("bmv2 vs software switch +bit-identical").containsPattern("CONTRIBUTIONS +[1-9]")
            .containsPattern("elements/s \\(slowest worker\\) +[0-9.]+e[+-][0-9]+ +[0-9.]+e[+-][0-9]+");
        assertNothingLeft(run, seen);
    }

    @Test
    void shouldTearDownWhenTheJobCannotBeProgrammed() throws Exception
    {
        final Run run = start("local", "--switch", "bmv2", "-w", "2", "-n", "3000", "--lanes", "300",
            "--no-progress");
        final int exit = run.process().await(180);
        final String output = run.process().output();
        assertThat(exit).as(output).isNotZero();
        assertThat(output).as(output).contains("300").contains("256");
        assertNothingLeft(run, List.of());
    }

    @Test
    void shouldTearDownOnCtrlC() throws Exception
    {
        final Run run = start("local", "--switch", "bmv2", "-w", "2", "-n", "4000000", "-i", "5", "--no-progress");
        final List<ProcessHandle> seen = run.awaitLine("programmed");
        Thread.sleep(3_000); // workers started and running
        seen.addAll(run.process().process().descendants().toList());
        new ProcessBuilder("kill", "-INT", Long.toString(run.process().process().pid())).start().waitFor();
        final int exit = run.process().await(60);
        assertThat(exit).as("exit status after SIGINT:%n%s", run.process().output()).isNotZero();
        assertNothingLeft(run, seen);
    }

    private record Run(InaggProcess process)
    {
        /** Waits for a line of output, returning the processes the run has started by then. */
        List<ProcessHandle> awaitLine(final String text) throws Exception
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
            while (process.process().isAlive() && !process.output().contains(text) && System.nanoTime() < deadline)
            {
                Thread.sleep(50);
            }
            assertThat(process.output()).as(process.output()).contains(text);
            return new ArrayList<>(process.process().descendants().toList());
        }
    }

    private Run start(final String... args) throws Exception
    {
        Files.createDirectories(dir);
        return new Run(InaggProcess.start(List.of(), dir.resolve("local.log"), List.of(args)));
    }

    private static void assertNothingLeft(final Run run, final List<ProcessHandle> seen) throws Exception
    {
        final String output = run.process().output();
        final long pid = run.process().process().pid();
        assertThat(HostNetwork.listNamespaces()).as("namespaces of the run (pid %d):%n%s", pid, output)
            .noneMatch(name -> name.startsWith(HostNetwork.PREFIX + pid));
        final Matcher switchPid = SWITCH_PID.matcher(output);
        if (switchPid.find())
        {
            final long simpleSwitch = Long.parseLong(switchPid.group(1));
            assertThat(ProcessHandle.of(simpleSwitch).map(ProcessHandle::isAlive).orElse(false))
                .as("simple_switch %d still running", simpleSwitch).isFalse();
        }
        Thread.sleep(500);
        for (final ProcessHandle process : seen)
        {
            assertThat(process.isAlive()).as("process %d (%s) still running", process.pid(),
                process.info().commandLine().orElse("?")).isFalse();
        }
    }
}
