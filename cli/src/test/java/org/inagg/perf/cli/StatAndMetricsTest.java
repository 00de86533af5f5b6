package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.DatagramSocket;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.agrona.concurrent.status.AtomicCounter;
import org.inagg.agent.CounterKey;
import org.inagg.agent.counters.CountersFile;
import org.inagg.agent.counters.CountersFileReader;
import org.inagg.agent.counters.CountersLayout;
import org.inagg.agent.counters.CountersSnapshot;
import org.inagg.agent.counters.PrometheusText;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchGauge;
import org.inagg.perf.cluster.ClusterOptions;
import org.inagg.perf.cluster.LocalCluster;
import org.inagg.perf.cluster.TransportKind;
import org.inagg.protocol.WorkerCounter;
import org.inagg.services.cli.StatCommand;
import org.inagg.transport.FaultConfig;
import org.inagg.transport.TransportCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Counters files, {@code inagg stat} and the Prometheus endpoint: what a switch counts is what the file holds, what
 * stat prints and what /metrics serves; files of processes that are gone are stale; files go with their process.
 */
class StatAndMetricsTest
{
    private static final Pattern SAMPLE = Pattern.compile("^(inagg_[a-z0-9_]+\\{[^}]*\\}) (-?\\d+)$",
        Pattern.MULTILINE);

    @TempDir
    Path dir;

    private final CliProcesses processes = new CliProcesses();

    @AfterEach
    void tearDown() throws Exception
    {
        processes.close();
    }

    @Test
    @Timeout(60)
    void shouldKeepTheCountersOfALocalClusterInAFileThatStatReads() throws Exception
    {
        final int workers = 2;
        final float[][] tensors = new float[workers][10_000];
        for (int w = 0; w < workers; w++)
        {
            java.util.Arrays.fill(tensors[w], w + 1);
        }
        try (CountersFile file = CountersFile.create(dir, "local", "2 workers in this test",
            LocalCluster.countersCapacity(workers)))
        {
            final LocalCluster cluster = LocalCluster.start(new ClusterOptions(workers, 16, 64, TransportKind.INPROC,
                FaultConfig.NONE, Duration.ofMillis(2), Duration.ofSeconds(20), "backoff", 1), null, file.registry());
            try
            {
                cluster.allReduce(tensors);
            }
            finally
            {
                cluster.close(); // the counters stand still from here on
            }

            try (CountersFileReader reader = CountersFileReader.open(file.path()))
            {
                final List<CountersSnapshot.Sample> samples = CountersSnapshot.take(reader.counters()).samples();
                for (final SwitchCounter counter : SwitchCounter.values())
                {
                    final CountersSnapshot.Sample sample = find(samples, counter.typeId(), CounterKey.NONE);
                    assertThat(sample.label()).isEqualTo("switch: " + counter.label());
                    assertThat(sample.key().metricName()).isEqualTo(counter.metricName());
                    assertThat(sample.value()).as(counter.name()).isEqualTo(cluster.softwareSwitch().counter(counter));
                }
                for (int w = 0; w < workers; w++)
                {
                    for (final WorkerCounter counter : WorkerCounter.values())
                    {
                        assertThat(find(samples, counter.typeId(), w).value()).as("worker %d %s", w, counter)
                            .isEqualTo(cluster.worker(w).counter(counter));
                    }
                }
                assertThat(find(samples, SwitchCounter.CONTRIBUTIONS.typeId(), CounterKey.NONE).value()).isPositive();
                assertThat(find(samples, WorkerCounter.ELEMENTS_REDUCED.typeId(), 0).value()).isEqualTo(10_000);
            }

            final String stat = stat("--counters-dir", dir.toString(), Long.toString(ProcessHandle.current().pid()));
            assertThat(stat).contains("1 process matching").contains("local pid " + ProcessHandle.current().pid())
                .contains("2 workers in this test").contains(file.path().toString());
            assertThat(line(stat, "switch: contributions aggregated")).contains(String.format(Locale.ROOT, "%,d",
                cluster.softwareSwitch().counter(SwitchCounter.CONTRIBUTIONS)));
            assertThat(line(stat, "job 1 worker 1: elements all-reduced")).contains("10,000");
        }
        assertThat(Files.list(dir)).as("removed on close").isEmpty();
    }

    @Test
    @Timeout(30)
    void shouldPrintRatesPerSecondBetweenTwoSamples() throws Exception
    {
        try (CountersFile file = CountersFile.create(dir, "switch", "counting in a thread", 4))
        {
            final AtomicCounter received = file.registry().newCounter(SwitchCounter.RECEIVED,
                "switch: " + SwitchCounter.RECEIVED.label());
            file.registry().newCounter(WorkerCounter.SLOTS_IN_USE, "slots", 1, 0).setRelease(7);
            final AtomicBoolean running = new AtomicBoolean(true);
            final Thread counting = new Thread(() ->
            {
                while (running.get())
                {
                    received.getAndAddRelease(1000);
                    LockSupportSleep.parkMillis(1);
                }
            });
            counting.start();
            try
            {
                final String stat = stat("--counters-dir", dir.toString(), "--count", "2", "--interval", "0.3");
                assertThat(stat).contains("per second");
                final String[] fields = line(stat, "switch: messages received").trim().split("\\s+");
                assertThat(Double.parseDouble(fields[3].replace(",", ""))).as(stat).isPositive();
                assertThat(line(stat, "slots")).contains("7").contains("(now)");
            }
            finally
            {
                running.set(false);
                counting.join();
            }
        }
    }

    @Test
    @Timeout(30)
    void shouldSayTheFileOfAProcessThatIsGoneIsStaleAndCleanIt() throws Exception
    {
        final Process gone = new ProcessBuilder("true").start();
        assertThat(gone.waitFor(10, TimeUnit.SECONDS)).isTrue();
        try (CountersFile live = CountersFile.create(dir, "ps", "alive", 4);
            CountersFile killed = CountersFile.create(dir, "switch", "killed", 4))
        {
            try (FileChannel channel = FileChannel.open(killed.path(), StandardOpenOption.WRITE))
            {
                channel.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, gone.pid()),
                    CountersLayout.PID_OFFSET);
            }

            final String stat = stat("--counters-dir", dir.toString());
            assertThat(stat).contains("1 process,").contains("ps pid " + ProcessHandle.current().pid())
                .contains("stale: " + killed.path() + " (switch, pid " + gone.pid())
                .contains("`inagg stat --clean` removes it");
            assertThat(killed.path()).exists();

            final String cleaned = stat("--counters-dir", dir.toString(), "--clean");
            assertThat(cleaned).contains("removed stale: " + killed.path());
            assertThat(killed.path()).doesNotExist();
            assertThat(live.path()).exists();
        }
    }

    @Test
    @Timeout(240)
    void shouldServeTheSwitchProcessCountersToPrometheusAsItsCountersFileHasThem() throws Exception
    {
        final int switchPort;
        try (DatagramSocket socket = new DatagramSocket(0))
        {
            switchPort = socket.getLocalPort();
        }
        final int metricsPort;
        try (ServerSocket socket = new ServerSocket(0))
        {
            metricsPort = socket.getLocalPort();
        }
        final Path switchLog = dir.resolve("switch.log");
        final Process switchProcess = processes.start(switchLog, List.of(), "switch", "--bind",
            "127.0.0.1:" + switchPort, "--job", "1:1", "--open", "--counters-dir", dir.toString(), "--metrics-port",
            Integer.toString(metricsPort), "--stats-interval", "0", "--duration", "200");
        CliProcesses.awaitLine(switchProcess, switchLog, "inagg switch listening", 120);
        final Path switchFile = dir.resolve("switch-" + switchProcess.pid() + ".counters");
        assertThat(Files.readString(switchLog)).contains("counters: " + switchFile + ", Prometheus at http://127.0.0.1:"
            + metricsPort + "/metrics");
        assertThat(switchFile).exists();

        final Path workerLog = dir.resolve("worker.log");
        final Process worker = processes.start(workerLog, List.of(), "worker", "--switch", "127.0.0.1:" + switchPort,
            "--worker-id", "0", "-w", "1", "-n", "5000", "-i", "2", "--no-progress", "--counters-dir",
            dir.toString());
        final String workerOutput = CliProcesses.await(worker, workerLog, 120);
        assertThat(worker.exitValue()).as(workerOutput).isZero();
        assertThat(workerOutput).contains("counters: " + dir.resolve("worker-" + worker.pid() + ".counters"));
        assertThat(dir.resolve("worker-" + worker.pid() + ".counters")).as("removed when the worker ended")
            .doesNotExist();
        assertThat(Files.readString(switchLog)).contains("INFO switch: job 1 installed")
            .contains("INFO switch: job 1 worker 0/1 joined from udp://127.0.0.1:");

        // The switch is idle now: its counters stand still.
        final HttpResponse<String> scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.statusCode()).isEqualTo(200);
        assertThat(scrape.headers().firstValue("Content-Type")).contains("text/plain; version=0.0.4; charset=utf-8");
        final Map<String, Long> scraped = new HashMap<>();
        final Matcher matcher = SAMPLE.matcher(scrape.body());
        while (matcher.find())
        {
            scraped.put(matcher.group(1), Long.parseLong(matcher.group(2)));
        }
        final String labels = "{role=\"switch\",pid=\"" + switchProcess.pid() + "\"}";
        try (CountersFileReader reader = CountersFileReader.open(switchFile))
        {
            assertThat(reader.role()).isEqualTo("switch");
            assertThat(reader.name()).isEqualTo("switch udp://127.0.0.1:" + switchPort + " jobs 1:1");
            final List<CountersSnapshot.Sample> samples = CountersSnapshot.take(reader.counters()).samples();
            assertThat(samples).hasSize(SwitchCounter.values().length + SwitchGauge.values().length
                + TransportCounter.values().length);
            for (final CountersSnapshot.Sample sample : samples)
            {
                final String family = PrometheusText.familyName(sample.key());
                assertThat(scrape.body()).contains("# TYPE " + family + (sample.key().gauge() ? " gauge\n" : " counter\n"));
                assertThat(scraped).containsEntry(family + labels, sample.value());
            }
            assertThat(scraped).containsEntry("inagg_switch_joins_total" + labels,
                find(samples, SwitchCounter.JOINS.typeId(), CounterKey.NONE).value());
            assertThat(find(samples, SwitchCounter.CONTRIBUTIONS.typeId(), CounterKey.NONE).value()).isPositive();
            assertThat(find(samples, TransportCounter.MESSAGES_RECEIVED.typeId(), CounterKey.NONE).value())
                .as("every message the socket handed up reached the switch").isEqualTo(
                    find(samples, SwitchCounter.RECEIVED.typeId(), CounterKey.NONE).value());
            assertThat(scraped).containsEntry("inagg_transport_messages_sent_total" + labels,
                find(samples, TransportCounter.MESSAGES_SENT.typeId(), CounterKey.NONE).value());
            assertThat(find(samples, TransportCounter.BYTES_SENT.typeId(), CounterKey.NONE).value()).isPositive();
        }

        final String stat = stat("--counters-dir", dir.toString(), "switch");
        assertThat(stat).contains("switch pid " + switchProcess.pid() + ", up ")
            .contains("switch udp://127.0.0.1:" + switchPort + " jobs 1:1");
        assertThat(line(stat, "switch: contributions aggregated")).contains(String.format(Locale.ROOT, "%,d",
            scraped.get("inagg_switch_contributions_total" + labels)));

        switchProcess.destroy(); // SIGTERM: the shutdown hook removes the file
        assertThat(switchProcess.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(switchFile).as("removed on SIGTERM").doesNotExist();
    }

    private static CountersSnapshot.Sample find(final List<CountersSnapshot.Sample> samples, final int typeId,
        final int workerId)
    {
        return samples.stream().filter(s -> s.typeId() == typeId && s.key().workerId() == workerId).findFirst()
            .orElseThrow(() -> new AssertionError("no counter of type " + typeId + " worker " + workerId));
    }

    private static String stat(final String... args)
    {
        final StringWriter text = new StringWriter();
        final CommandLine commandLine = new CommandLine(new StatCommand());
        commandLine.setOut(new PrintWriter(text, true));
        commandLine.setErr(new PrintWriter(text, true));
        commandLine.execute(args);
        return text.toString();
    }

    private static String line(final String text, final String label)
    {
        return text.lines().filter(l -> l.endsWith(label) || l.contains(label + " ")).findFirst()
            .orElseThrow(() -> new AssertionError("no line for '" + label + "' in:\n" + text));
    }

    /** Sleeps without throwing InterruptedException. */
    private static final class LockSupportSleep
    {
        static void parkMillis(final long ms)
        {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ms));
        }
    }
}
