package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.inagg.perf.cluster.ClusterOptions;
import org.inagg.perf.cluster.LocalCluster;
import org.inagg.services.cli.SyntheticGradients;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two-level aggregation across processes over UDP on loopback, with faults: {@code inagg ps}, two
 * {@code inagg switch --upstream} (workers 0-1 and 2-3) and five {@code inagg worker}s, worker 4 sending to the
 * parameter server directly. Every worker's result must be bit-identical to the flat in-process all-reduce.
 */
class TwoLevelUdpTest
{
    private static final Pattern CRC = Pattern.compile("result crc32\\s+([0-9a-f]{8})");
    private static final int WORKERS = 5;
    private static final int ELEMENTS = 50_000;
    private static final long SEED = 3;

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
    void shouldAllReduceAcrossSwitchesAndTheParameterServerInSeparateProcesses() throws Exception
    {
        final int base = 20_000 + (int)(ProcessHandle.current().pid() % 20_000);
        final String ps = "127.0.0.1:" + base;
        final String[] switches = {"127.0.0.1:" + (base + 1), "127.0.0.1:" + (base + 2)};
        final List<String> workerAt = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            workerAt.add("127.0.0.1:" + (base + 10 + w));
        }
        final String job = "1:" + WORKERS + ":16:256";
        final String loss = "0.02";

        final Path psLog = dir.resolve("ps.log");
        final Process psProcess = processes.start(psLog, List.of(), "ps", "--bind", ps, "--job", job, "--workers-at",
            String.join(",", workerAt), "--stats-interval", "0", "--duration", "200", "--loss", loss);
        final List<Process> switchProcesses = new ArrayList<>();
        for (int s = 0; s < 2; s++)
        {
            // Admission on a first-level switch (issue 24; it used to need --open): its local workers' sources.
            switchProcesses.add(processes.start(dir.resolve("switch" + s + ".log"), List.of(), "switch", "--bind",
                switches[s], "--job", job, "--upstream", ps, "--local-workers", (2 * s) + "," + (2 * s + 1),
                "--source", "1:" + (2 * s) + "=" + workerAt.get(2 * s) + ",1:" + (2 * s + 1) + "="
                    + workerAt.get(2 * s + 1),
                "--stats-interval", "0", "--duration", "200", "--loss", loss));
        }
        CliProcesses.awaitLine(psProcess, psLog, "inagg ps listening", 60);
        for (int s = 0; s < 2; s++)
        {
            CliProcesses.awaitLine(switchProcesses.get(s), dir.resolve("switch" + s + ".log"), "inagg switch listening",
                60);
        }

        final List<Process> workers = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            final String sendTo = w < 4 ? switches[w / 2] : ps;
            workers.add(processes.start(dir.resolve("worker" + w + ".log"), List.of(), "worker", "--switch", sendTo,
                "--bind", workerAt.get(w), "--job-id", "1", "--worker-id", Integer.toString(w), "-w",
                Integer.toString(WORKERS), "-n", Integer.toString(ELEMENTS), "-i", "2", "--seed", Long.toString(SEED),
                "--loss", loss, "--no-progress", "--peer-timeout-ms", "30000"));
        }
        final String expected = String.format(Locale.ROOT, "%08x", expectedCrc());
        final List<String> outputs = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++)
        {
            outputs.add(CliProcesses.await(workers.get(w), dir.resolve("worker" + w + ".log"), 180));
        }
        psProcess.destroy();
        final String psOutput = CliProcesses.await(psProcess, psLog, 30);
        for (int w = 0; w < WORKERS; w++)
        {
            final String context = "worker " + w + ":\n" + outputs.get(w) + "\nps:\n" + psOutput;
            assertThat(workers.get(w).exitValue()).as(context).isZero();
            final Matcher crc = CRC.matcher(outputs.get(w));
            assertThat(crc.find()).as(context).isTrue();
            assertThat(crc.group(1)).as("worker %d bit-identical to the flat all-reduce; %s", w, context)
                .isEqualTo(expected);
        }
        assertThat(psOutput).contains("inagg ps listening");
    }

    /** The flat all-reduce of the same gradients: one switch, in process, no faults. */
    private static long expectedCrc()
    {
        final float[][] sources = new float[WORKERS][ELEMENTS];
        final float[][] results = new float[WORKERS][ELEMENTS];
        for (int w = 0; w < WORKERS; w++)
        {
            SyntheticGradients.fill(sources[w], w, 0, SEED);
        }
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(WORKERS)))
        {
            cluster.allReduce(sources, results);
        }
        return SyntheticGradients.crc32(results[0]);
    }
}
