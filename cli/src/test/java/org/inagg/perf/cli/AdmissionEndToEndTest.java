package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Admission by default, as an operator runs it: {@code inagg switch --job 1:2 --source ...} registers each worker's
 * UDP source, and a squatter that JOINs first as worker 0 from another port neither joins nor disturbs the job; the
 * real workers, bound to their registered ports, complete with the same correct result. A {@code --job} without
 * sources and without {@code --open} is refused with the reason.
 */
class AdmissionEndToEndTest
{
    private static final Pattern CRC = Pattern.compile("result crc32\\s+([0-9a-f]{8})");

    @TempDir
    Path dir;

    private final CliProcesses processes = new CliProcesses();

    @AfterEach
    void tearDown() throws Exception
    {
        processes.close();
    }

    @Test
    @Timeout(180)
    void shouldAggregateOnlyTheRegisteredSourcesWhileASquatterJoinsFirst() throws Exception
    {
        final int base = 30_000 + (int)(ProcessHandle.current().pid() % 5_000) * 2;
        final String address = "127.0.0.1:" + base;
        final String source0 = "127.0.0.1:" + (base + 10_001);
        final String source1 = "127.0.0.1:" + (base + 10_002);
        final Path switchLog = dir.resolve("switch.log");
        final Process switchProcess = processes.start(switchLog, List.of(), "switch", "--bind", address, "--job",
            "1:2:32:256", "--source", "1:0=" + source0 + ",1:1=" + source1, "--stats-interval", "0", "--duration",
            "150");
        CliProcesses.awaitLine(switchProcess, switchLog, "inagg switch listening", 60);

        final Path squatterLog = dir.resolve("squatter.log");
        final Process squatter = processes.start(squatterLog, List.of(), "worker", "--switch", address, "--bind",
            "127.0.0.1:0", "--worker-id", "0", "-w", "2", "-n", "100000", "-i", "2", "--peer-timeout-ms", "4000",
            "--no-progress");
        CliProcesses.awaitLine(squatter, switchLog, "not the worker's registered source", 60);

        final List<Process> workers = new ArrayList<>();
        final List<Path> logs = new ArrayList<>();
        final String[] sources = {source0, source1};
        for (int w = 0; w < 2; w++)
        {
            final Path log = dir.resolve("worker" + w + ".log");
            logs.add(log);
            workers.add(processes.start(log, List.of(), "worker", "--switch", address, "--bind", sources[w],
                "--worker-id", Integer.toString(w), "-w", "2", "-n", "300000", "-i", "3", "--seed", "5",
                "--peer-timeout-ms", "20000", "--no-progress"));
        }
        final List<String> crcs = new ArrayList<>();
        for (int w = 0; w < 2; w++)
        {
            final String text = CliProcesses.await(workers.get(w), logs.get(w), 120);
            assertThat(workers.get(w).exitValue()).as(text).isZero();
            assertThat(text).containsPattern("within bound +yes");
            final Matcher crc = CRC.matcher(text);
            assertThat(crc.find()).as(text).isTrue();
            crcs.add(crc.group(1));
        }
        assertThat(crcs).as("both workers' results").containsOnly(crcs.get(0));

        final String squatterText = CliProcesses.await(squatter, squatterLog, 60);
        assertThat(squatter.exitValue()).as(squatterText).isNotZero();
        final String switchText = Files.readString(switchLog);
        assertThat(switchText).contains("registered sources").contains("not the worker's registered source")
            .contains("worker 0/2 joined from udp://" + source0)
            .contains("worker 1/2 joined from udp://" + source1).doesNotContain("open mode");
    }

    @Test
    @Timeout(60)
    void shouldRefuseAJobWithoutSourcesUnlessOpen() throws Exception
    {
        final Path log = dir.resolve("switch.log");
        final Process refused = processes.start(log, List.of(), "switch", "--bind", "127.0.0.1:0", "--job", "1:2",
            "--duration", "5");
        final String text = CliProcesses.await(refused, log, 50);

        assertThat(refused.exitValue()).as(text).isNotZero();
        assertThat(text).contains("job 1 has no registered sources").contains("--source 1:WORKER=HOST:PORT")
            .contains("--open");
    }
}
