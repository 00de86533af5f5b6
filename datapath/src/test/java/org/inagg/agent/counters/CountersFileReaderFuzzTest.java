package org.inagg.agent.counters;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.agrona.concurrent.status.CountersReader;
import org.inagg.protocol.WorkerCounter;

/**
 * Fuzzes a counters file as {@code inagg stat} reads any file of the counters directory (docs/fuzzing.md):
 * {@link CountersFileReader#open}, then {@link CountersSnapshot#take} and {@link PrometheusText#format} of what it holds.
 * Invariants: a bad file fails to open with an {@link IOException} that names it, never another exception; an opened
 * file gives a snapshot without an exception, every label within Agrona's 380 bytes, every metric name a Prometheus
 * name, and text in which every line is a {@code # HELP}, a {@code # TYPE} or one sample.
 */
class CountersFileReaderFuzzTest
{
    private static final Pattern METRIC_NAME = Pattern.compile("[a-z_][a-z0-9_]*");
    private static final Pattern SAMPLE_LINE = Pattern.compile("[a-z_][a-z0-9_]*\\{[^\\n]*\\} -?[0-9]+");
    private static final Path FILE = scratchFile();

    private static Path scratchFile()
    {
        try
        {
            // tmpfs where there is one: every input is written to the file and read back.
            final Path shm = Path.of("/dev/shm");
            final Path dir = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "inagg-counters-fuzz")
                : Files.createTempDirectory("inagg-counters-fuzz");
            dir.toFile().deleteOnExit();
            final Path file = dir.resolve("fuzz-1" + CountersLayout.FILE_SUFFIX);
            file.toFile().deleteOnExit();
            return file;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    @FuzzTest(maxDuration = "10s")
    void shouldRefuseABadCountersFileWithAnIOExceptionAndReportWhatAGoodOneHolds(final byte[] bytes)
        throws IOException
    {
        Files.write(FILE, bytes);
        final CountersFileReader reader;
        try
        {
            reader = CountersFileReader.open(FILE);
        }
        catch (final IOException e)
        {
            assertThat(e.getMessage()).contains(FILE.toString());
            return;
        }
        try (reader)
        {
            assertThat(reader.role().length()).isLessThanOrEqualTo(CountersLayout.MAX_ROLE_LENGTH);
            assertThat(reader.name().getBytes(StandardCharsets.UTF_8).length)
                .isLessThanOrEqualTo(CountersLayout.MAX_NAME_LENGTH * 3); // malformed bytes decode to U+FFFD
            final CountersSnapshot snapshot = CountersSnapshot.take(reader.counters());
            for (final CountersSnapshot.Sample sample : snapshot.samples())
            {
                assertThat(sample.label().length()).isLessThanOrEqualTo(CountersReader.MAX_LABEL_LENGTH);
                assertThat(sample.key().metricName()).matches(METRIC_NAME);
            }
            final Map<String, String> labels = new LinkedHashMap<>();
            labels.put("role", reader.role());
            labels.put("pid", Long.toString(reader.pid()));
            final String text = PrometheusText.format(snapshot, labels);
            for (final String line : text.split("\n"))
            {
                if (!line.isEmpty() && !line.startsWith("# HELP ") && !line.startsWith("# TYPE "))
                {
                    assertThat(line).matches(SAMPLE_LINE);
                }
            }
        }
    }

    /**
     * Writes the seeds into {@code <root>/datapath/src/test/resources/.../<this class>Inputs/<method>/}: real files of a
     * worker (counters with and without a descriptor), a file still being created, and a truncated one.
     */
    public static void main(final String[] args) throws IOException
    {
        final Path seeds = Path.of(args.length > 0 ? args[0] : ".").resolve("datapath/src/test/resources/org/inagg/"
            + "agent/counters/CountersFileReaderFuzzTestInputs/"
            + "shouldRefuseABadCountersFileWithAnIOExceptionAndReportWhatAGoodOneHolds");
        Files.createDirectories(seeds);
        final Path dir = Files.createTempDirectory("inagg-counters-seeds");
        try (CountersFile file = CountersFile.create(dir, "worker", "worker 0/2 of job 7", 4))
        {
            file.registry().newCounter(WorkerCounter.PACKETS_SENT, "job 7 worker 0: packets sent", 7, 0)
                .getAndAddRelease(42);
            file.registry().newCounter(WorkerCounter.SLOTS_IN_USE, "job 7 worker 0: slots in use", 7, 0).setRelease(5);
            file.registry().newCounter("something else", 999).incrementRelease();
            final byte[] whole = Files.readAllBytes(file.path());
            Files.write(seeds.resolve("worker-three-counters"), whole);
            final byte[] creating = whole.clone();
            creating[CountersLayout.VERSION_OFFSET] = 0;
            Files.write(seeds.resolve("still-being-created"), creating);
            Files.write(seeds.resolve("truncated"), java.util.Arrays.copyOf(whole, CountersLayout.HEADER_LENGTH + 600));
        }
        try (CountersFile file = CountersFile.create(dir, "switch", "switch udp://0.0.0.0:9000 jobs 1:4", 1))
        {
            Files.write(seeds.resolve("switch-empty"), Files.readAllBytes(file.path()));
        }
    }
}
