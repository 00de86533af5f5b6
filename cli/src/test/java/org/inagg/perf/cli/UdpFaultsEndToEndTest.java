package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The process path over loopback UDP under faults: injected loss, duplication and reordering on the switch and the
 * workers, and a worker stopped with SIGSTOP for a second and continued. Neither may change a result (the same crc32
 * on every worker, within the fixed-point bound) or leave the job stuck (every process ends within the test's limit).
 */
class UdpFaultsEndToEndTest
{
    private static final Pattern CRC = Pattern.compile("result crc32\\s+([0-9a-f]{8})");
    private static final Pattern RETRANSMISSIONS = Pattern.compile("retransmissions\\s+([0-9,]+)");

    @TempDir
    Path dir;

    private final CliProcesses processes = new CliProcesses();

    @AfterEach
    void tearDown() throws Exception
    {
        processes.close();
    }

    @Test
    @Timeout(240)
    void shouldKeepResultsUnderLossDuplicationAndReordering() throws Exception
    {
        final List<String> logs = runJob(2, "0.05", false);

        assertSameCorrectResult(logs);
        // Loss was injected, so something was resent, and the counters say so.
        assertThat(logs).anySatisfy(log -> assertThat(retransmissions(log)).isPositive());
    }

    @Test
    @Timeout(240)
    void shouldFinishWithTheSameResultWhenAWorkerIsStoppedForASecond() throws Exception
    {
        final List<String> logs = runJob(3, "0", true);

        assertSameCorrectResult(logs);
    }

    /** Runs a switch and {@code workers} worker processes; with {@code stop}, worker 1 gets SIGSTOP then SIGCONT. */
    private List<String> runJob(final int workers, final String loss, final boolean stop) throws Exception
    {
        final int port = 40_000 + (int)(ProcessHandle.current().pid() % 10_000) + (stop ? 1 : 0);
        final String address = "127.0.0.1:" + port;
        final Path switchLog = dir.resolve("switch.log");
        final Process switchProcess = processes.start(switchLog, List.of(), "switch", "--bind", address, "--open", "--job",
            "1:" + workers + ":32:256", "--stats-interval", "0", "--duration", "200", "--loss", loss);
        CliProcesses.awaitLine(switchProcess, switchLog, "inagg switch listening", 60);
        final List<Process> started = new ArrayList<>();
        final List<Path> logs = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            final Path log = dir.resolve("worker" + w + ".log");
            logs.add(log);
            started.add(processes.start(log, List.of(), "worker", "--switch", address, "--bind", "127.0.0.1:0",
                "--worker-id", Integer.toString(w), "-w", Integer.toString(workers), "-n", "300000", "-i",
                stop ? "40" : "4", "--seed", "7", "--loss", loss, "--peer-timeout-ms", "20000", "--no-progress"));
        }
        if (stop)
        {
            final Process victim = started.get(1);
            CliProcesses.awaitLine(victim, logs.get(1), "joined switch", 60);
            Thread.sleep(300);
            signal("STOP", victim.pid());
            Thread.sleep(1000);
            signal("CONT", victim.pid());
        }
        final List<String> texts = new ArrayList<>();
        for (int w = 0; w < workers; w++)
        {
            final String text = CliProcesses.await(started.get(w), logs.get(w), 150);
            assertThat(started.get(w).exitValue()).as(text).isZero();
            texts.add(text);
        }
        return texts;
    }

    private static void assertSameCorrectResult(final List<String> logs)
    {
        final List<String> crcs = new ArrayList<>();
        for (final String log : logs)
        {
            assertThat(log).containsPattern("within bound +yes");
            final Matcher crc = CRC.matcher(log);
            assertThat(crc.find()).as(log).isTrue();
            crcs.add(crc.group(1));
        }
        assertThat(crcs).as("every worker's result").containsOnly(crcs.get(0));
    }

    private static long retransmissions(final String log)
    {
        final Matcher matcher = RETRANSMISSIONS.matcher(log);
        return matcher.find() ? Long.parseLong(matcher.group(1).replace(",", "")) : -1;
    }

    private static void signal(final String signal, final long pid) throws Exception
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }
}
