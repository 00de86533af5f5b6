package org.inagg.agent.counters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersReader;
import org.inagg.agent.CounterKey;
import org.inagg.protocol.WorkerCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CountersFileTest
{
    @TempDir
    Path dir;

    @Test
    void shouldLetAReaderSeeWhatTheWriterCounts() throws IOException
    {
        try (CountersFile file = CountersFile.create(dir, "worker", "worker 0/2 of job 7", 16))
        {
            final AtomicCounter sent = file.registry().newCounter(WorkerCounter.PACKETS_SENT,
                "job 7 worker 0: packets sent", 7, 0);
            final AtomicCounter slots = file.registry().newCounter(WorkerCounter.SLOTS_IN_USE,
                "job 7 worker 0: slots in use", 7, 0);
            final AtomicCounter plain = file.registry().newCounter("something else", 999);
            sent.incrementRelease();
            sent.getAndAddRelease(41);
            slots.setRelease(5);
            plain.incrementRelease();

            assertThat(file.path().getFileName().toString()).isEqualTo("worker-" + ProcessHandle.current().pid()
                + ".counters");
            try (CountersFileReader reader = CountersFileReader.open(file.path()))
            {
                assertThat(reader.pid()).isEqualTo(ProcessHandle.current().pid());
                assertThat(reader.role()).isEqualTo("worker");
                assertThat(reader.name()).isEqualTo("worker 0/2 of job 7");
                assertThat(reader.startTimeMs()).isEqualTo(file.startTimeMs());
                assertThat(reader.isStale()).isFalse();
                assertThat(reader.isRemoved()).isFalse();

                final List<CountersSnapshot.Sample> samples = CountersSnapshot.take(reader.counters()).samples();
                assertThat(samples).hasSize(3);
                final CountersSnapshot.Sample first = samples.get(0);
                assertThat(first.typeId()).isEqualTo(101);
                assertThat(first.label()).isEqualTo("job 7 worker 0: packets sent");
                assertThat(first.value()).isEqualTo(42);
                assertThat(first.key().metricName()).isEqualTo("inagg_worker_packets_sent");
                assertThat(first.key().jobId()).isEqualTo(7);
                assertThat(first.key().workerId()).isZero();
                assertThat(first.key().gauge()).isFalse();
                assertThat(samples.get(1).key().gauge()).isTrue();
                assertThat(samples.get(1).value()).isEqualTo(5);
                assertThat(samples.get(2).key().metricName()).isEqualTo("inagg_counter_999");
                assertThat(samples.get(2).key().jobId()).isEqualTo(CounterKey.NONE);

                sent.incrementRelease();
                assertThat(reader.counters().getCounterValue(first.counterId())).as("read live").isEqualTo(43);
            }
        }
    }

    @Test
    void shouldRemoveTheFileOnClose() throws IOException
    {
        final CountersFile file = CountersFile.create(dir, "switch", "s", 4);
        final AtomicCounter counter = file.registry().newCounter("c", 1);
        assertThat(file.path()).exists();
        file.close();
        assertThat(file.path()).doesNotExist();
        counter.incrementRelease(); // still mapped: an agent may count while the process shuts down
        assertThat(counter.get()).isEqualTo(1);
        file.close();
    }

    @Test
    void shouldNameASecondFileOfTheSameRoleInOneProcessApart() throws IOException
    {
        try (CountersFile first = CountersFile.create(dir, "local", "a", 4);
            CountersFile second = CountersFile.create(dir, "local", "b", 4))
        {
            assertThat(second.path()).isNotEqualTo(first.path());
            assertThat(second.path().getFileName().toString()).isEqualTo("local-" + ProcessHandle.current().pid()
                + "-2.counters");
            assertThat(CountersDirectory.files(dir)).containsExactlyInAnyOrder(first.path(), second.path());
        }
    }

    @Test
    void shouldRecogniseTheFileOfAProcessThatIsGoneAsStale() throws Exception
    {
        final long deadPid = deadPid();
        try (CountersFile file = CountersFile.create(dir, "switch", "killed", 4))
        {
            patchLong(file.path(), CountersLayout.PID_OFFSET, deadPid);
            try (CountersFileReader reader = CountersFileReader.open(file.path()))
            {
                assertThat(reader.pid()).isEqualTo(deadPid);
                assertThat(reader.isStale()).isTrue();
            }
        }
    }

    @Test
    void shouldRecogniseAReusedPidAsStale() throws Exception
    {
        try (CountersFile file = CountersFile.create(dir, "switch", "an earlier process with our pid", 4))
        {
            patchLong(file.path(), CountersLayout.START_TIME_OFFSET, file.startTimeMs() - 3_600_000);
            try (CountersFileReader reader = CountersFileReader.open(file.path()))
            {
                assertThat(reader.isStale()).isTrue();
            }
            // A new file of the same role replaces the one the earlier process left.
            try (CountersFile replacement = CountersFile.create(dir, "switch", "now", 4);
                CountersFileReader reader = CountersFileReader.open(replacement.path()))
            {
                assertThat(replacement.path()).isEqualTo(file.path());
                assertThat(reader.isStale()).isFalse();
                assertThat(reader.name()).isEqualTo("now");
            }
        }
    }

    @Test
    void shouldRefuseWhatIsNotACountersFile() throws IOException
    {
        final Path other = dir.resolve("other.counters");
        Files.write(other, new byte[CountersLayout.HEADER_LENGTH]);
        assertThatThrownBy(() -> CountersFileReader.open(other)).isInstanceOf(IOException.class)
            .hasMessageContaining("not an inagg counters file");
        final Path empty = dir.resolve("empty.counters");
        Files.write(empty, new byte[0]);
        assertThatThrownBy(() -> CountersFileReader.open(empty)).hasMessageContaining("still being created");
        assertThatThrownBy(() -> CountersFile.create(dir, "Bad Role", "", 4))
            .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Regression test of a fuzzing finding (docs/fuzzing.md, CountersFileReaderFuzzTest): a record whose label length
     * was 6.6 million made {@code CountersSnapshot.take} (Agrona's forEach) throw IndexOutOfBoundsException, which
     * ended {@code inagg stat}; a metric name of any bytes went into the Prometheus text as it was, and a counter of a
     * negative type id without a name was exported as {@code inagg_counter_-1}, which is not a Prometheus name.
     */
    @Test
    void shouldReportADamagedRecordWithoutAnExceptionAndNeverExportAForeignName() throws IOException
    {
        try (CountersFile file = CountersFile.create(dir, "worker", "damaged", 4))
        {
            file.registry().newCounter(WorkerCounter.PACKETS_SENT, "job 7 worker 0: packets sent", 7, 0)
                .getAndAddRelease(42);
            file.registry().newCounter(WorkerCounter.SLOTS_IN_USE, "job 7 worker 0: slots in use", 7, 0);
            file.registry().newCounter(WorkerCounter.RETRANSMISSIONS, "job 7 worker 0: retransmissions", 7, 0);
            file.registry().newCounter("negative type", -1);
            final int record0 = CountersLayout.HEADER_LENGTH;
            final int record1 = record0 + CountersReader.METADATA_LENGTH;
            final int record2 = record1 + CountersReader.METADATA_LENGTH;
            patchInt(file.path(), record0 + CountersReader.LABEL_OFFSET, 6_619_136);
            patchInt(file.path(), record1 + CountersReader.LABEL_OFFSET, -1);
            patchLong(file.path(), record2 + CountersReader.KEY_OFFSET + CounterKey.NAME_OFFSET,
                ByteBuffer.wrap("x} 1\n#ab".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                    .order(ByteOrder.nativeOrder()).getLong());
            try (CountersFileReader reader = CountersFileReader.open(file.path()))
            {
                final List<CountersSnapshot.Sample> samples = CountersSnapshot.take(reader.counters()).samples();
                assertThat(samples).hasSize(4);
                assertThat(samples.get(0).label()).isEqualTo("(counter 0: bad label length 6619136)");
                assertThat(samples.get(0).value()).isEqualTo(42);
                assertThat(samples.get(0).key().metricName()).isEqualTo("inagg_worker_packets_sent");
                assertThat(samples.get(1).label()).isEqualTo("(counter 1: bad label length -1)");
                assertThat(samples.get(2).label()).isEqualTo("job 7 worker 0: retransmissions");
                assertThat(samples.get(2).key().metricName()).isEqualTo("inagg_counter_"
                    + WorkerCounter.RETRANSMISSIONS.typeId());
                assertThat(samples.get(3).key().metricName()).isEqualTo("inagg_counter_4294967295");
            }
        }
    }

    @Test
    void shouldResolveTheDirectoryFromTheOptionFirst()
    {
        assertThat(CountersDirectory.resolve("/some/where")).isEqualTo(Path.of("/some/where"));
        final Path fallback = CountersDirectory.resolve(null);
        if (System.getenv(CountersDirectory.DIR_ENV_NAME) == null
            && System.getProperty(CountersDirectory.DIR_PROP_NAME) == null)
        {
            assertThat(fallback).isEqualTo(Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm/inagg")
                : Path.of(System.getProperty("java.io.tmpdir"), "inagg"));
        }
    }

    /** The pid of a process that ran and exited. */
    static long deadPid() throws Exception
    {
        final Process process = new ProcessBuilder("true").start();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return process.pid();
    }

    static void patchInt(final Path file, final int offset, final int value) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
        {
            channel.write(ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.nativeOrder()).putInt(0, value), offset);
        }
    }

    static void patchLong(final Path file, final int offset, final long value) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
        {
            channel.write(ByteBuffer.allocate(Long.BYTES).order(ByteOrder.nativeOrder()).putLong(0, value), offset);
        }
    }
}
