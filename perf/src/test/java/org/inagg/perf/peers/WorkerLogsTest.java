package org.inagg.perf.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.inagg.services.cli.ProcessCpu;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What bench-peers reads from inagg workers' logs, the CPU per all-reduce included. */
class WorkerLogsTest
{
    @TempDir
    Path dir;

    @Test
    void shouldAddTheWorkersAndTheSwitchsCpuPerAllReduce() throws Exception
    {
        final PeerRun run = new PeerRun(2, 1024, 10, 2, 30, dir);
        final List<Path> logs = List.of(log(0, 4.0e7, ProcessCpu.workerLine(120_000_000L, 10)),
            log(1, 5.0e7, ProcessCpu.workerLine(80_000_000L, 10)));

        final PeerResult result = WorkerLogs.collect("inagg", run, logs, true, "packets", 0.5);

        assertThat(result.isMeasured()).isTrue();
        assertThat(result.elementsPerSecond()).isEqualTo(4.0e7);
        // 12 + 8 ms of the workers, 500 ms of the switch over 10 all-reduces.
        assertThat(result.cpuSecondsPerOp()).isCloseTo(0.070, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(result.note()).contains("CPU per all-reduce 70.0 ms: workers 20.0, switch 50.0");
    }

    @Test
    void shouldGiveNoCpuFigureWhenAnyPartIsUnknown() throws Exception
    {
        final PeerRun run = new PeerRun(2, 1024, 10, 2, 30, dir);
        final List<Path> both = List.of(log(0, 4.0e7, ProcessCpu.workerLine(120_000_000L, 10)),
            log(1, 5.0e7, ProcessCpu.workerLine(80_000_000L, 10)));
        final List<Path> oneSilent = List.of(both.get(0), log(2, 5.0e7, null));

        assertThat(WorkerLogs.collect("inagg", run, both, true, "packets", Double.NaN).cpuSecondsPerOp()).isNaN();
        assertThat(WorkerLogs.collect("inagg", run, both, true, "packets").cpuSecondsPerOp()).isNaN();
        final PeerResult silent = WorkerLogs.collect("inagg", run, oneSilent, true, "packets", 0.5);
        assertThat(silent.isMeasured()).isTrue();
        assertThat(silent.cpuSecondsPerOp()).isNaN();
        assertThat(silent.note()).doesNotContain("CPU");
    }

    private Path log(final int id, final double rate, final String cpuLine) throws Exception
    {
        final Path log = dir.resolve("worker-" + id + ".log");
        Files.writeString(log, String.join("\n",
            "inagg worker " + id + "/2 joined",
            "  per all-reduce         min 10.00 ms, p50 12.00 ms, max 20.00 ms",
            String.format(java.util.Locale.ROOT, "  elements/s             %.3e (at the p50 all-reduce: 1e8)", rate),
            "  retransmissions        0",
            "  packets sent           100 (0.000% retransmitted)",
            cpuLine == null ? "" : cpuLine,
            "  within bound           yes (docs/protocol.md)", ""));
        return log;
    }
}
