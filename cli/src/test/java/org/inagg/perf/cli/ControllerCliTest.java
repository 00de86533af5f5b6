package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code inagg switch --control}, {@code inagg controller} and {@code inagg worker} with torchrun's variables and
 * {@code INAGG_CONTROLLER} as processes: no address list, no job id, no worker id typed; the job is admitted, summed
 * exactly and freed (docs/controller.md).
 */
class ControllerCliTest
{
    @TempDir
    Path dir;

    private static int freeTcpPort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    private static int freeUdpPort() throws IOException
    {
        try (DatagramSocket socket = new DatagramSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    @Test
    @Timeout(180)
    void shouldRunAJobOfLauncherStartedWorkersThroughTheControllerAndFreeIt() throws Exception
    {
        final int data = freeUdpPort();
        final int control = freeTcpPort();
        final int http = freeTcpPort();
        final String url = "http://127.0.0.1:" + http;
        try (CliProcesses processes = new CliProcesses())
        {
            final Path switchLog = dir.resolve("switch.log");
            final Process sw = processes.start(switchLog, List.of(), "switch", "--bind", "127.0.0.1:" + data,
                "--control", "127.0.0.1:" + control, "--stats-interval", "0");
            CliProcesses.awaitLine(sw, switchLog, "inagg switch listening", 60);
            final Path controllerLog = dir.resolve("controller.log");
            final Process controller = processes.start(controllerLog, List.of(), "controller", "--bind",
                "127.0.0.1:" + http, "--switch-control", "http://127.0.0.1:" + control, "--journal",
                dir.resolve("journal").toString(), "--lease-ms", "3000");
            CliProcesses.awaitLine(controller, controllerLog, "inagg controller listening", 60);
            assertThat(Files.readString(controllerLog)).contains("inagg controller listening");

            final List<Process> workers = new ArrayList<>();
            for (int rank = 0; rank < 3; rank++)
            {
                workers.add(processes.start(dir.resolve("worker" + rank + ".log"), List.of(), Map.of("RANK",
                    Integer.toString(rank), "WORLD_SIZE", "3", "TORCHELASTIC_RUN_ID", "run-42", "INAGG_CONTROLLER", url,
                    "INAGG_JOB_SECRET", "run-42-shared-job-secret"), // the launcher's secret, the same at every rank
                    "worker", "--dtype", "int32", "-n", "30000", "-i", "3", "--no-progress"));
            }
            for (int rank = 0; rank < 3; rank++)
            {
                final String log = CliProcesses.await(workers.get(rank), dir.resolve("worker" + rank + ".log"), 120);
                assertThat(workers.get(rank).exitValue()).as(log).isZero();
                assertThat(log).contains("job 'run-42' is job 1").containsPattern("exact int32 sum +yes");
            }
            final Path wrongLog = dir.resolve("wrong.log");
            final Process wrong = processes.start(wrongLog, List.of(), Map.of("INAGG_CONTROLLER", url), "worker",
                "--job-name", "run-43", "--worker-id", "0", "-w", "2", "--dtype", "int32", "-n", "10", "-i", "1",
                "--controller-wait-s", "1", "--no-progress");
            final String wrongOut = CliProcesses.await(wrong, wrongLog, 60);
            assertThat(wrong.exitValue()).isNotZero();
            assertThat(wrongOut).contains("1 of 2 ranks registered for job 'run-43' after 1 s; missing rank 1");
            CliProcesses.awaitLine(controller, controllerLog, "job 'run-43' (id 1, session 2) freed", 30);
            assertThat(Files.readString(controllerLog))
                .contains("job 'run-42' (id 1, session 1) admitted")
                .contains("job 'run-42' (id 1, session 1) freed: all ranks finished")
                .contains("job 'run-43' (id 1, session 2) freed");
            assertThat(Files.readString(switchLog)).contains("job 1 installed in session 1").contains("job 1 removed");
        }
    }
}
