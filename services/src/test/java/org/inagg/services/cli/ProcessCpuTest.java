package org.inagg.services.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The process CPU clock and the lines bench-peers reads back. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ProcessCpuTest
{
    @Test
    void shouldCountTheCpuThisProcessSpends()
    {
        final long before = ProcessCpu.nanos();
        final long wallBefore = System.nanoTime();
        while (System.nanoTime() - wallBefore < 200_000_000L)
        {
            Thread.onSpinWait();
        }
        final long spent = ProcessCpu.nanos() - before;
        final long wall = System.nanoTime() - wallBefore;

        assertThat(before).isPositive();
        // At least what a busy thread on a shared machine gets in a tenth of that time, at most every core all of it.
        assertThat(spent).isGreaterThan(20_000_000L)
            .isLessThanOrEqualTo(wall * Runtime.getRuntime().availableProcessors() + 50_000_000L);
    }

    @Test
    void shouldUseClockGettimeOnLinuxNotTheJvmsTenMillisecondTicks()
    {
        assumeTrue(System.getProperty("os.name", "").startsWith("Linux"), "clock_gettime through FFM: Linux only");
        assertThat(ProcessCpu.clockName()).isEqualTo("clock_gettime");
        // Ticks would make every reading a multiple of 10 ms; the nanosecond clock almost never is.
        boolean offTick = false;
        for (int i = 0; i < 1_000 && !offTick; i++)
        {
            offTick = ProcessCpu.nanos() % 10_000_000L != 0;
        }
        assertThat(offTick).isTrue();
    }

    @Test
    void shouldWriteLinesThatItsPatternsReadBack()
    {
        final String worker = ProcessCpu.workerLine(123_456_789L, 10);
        final Matcher w = ProcessCpu.WORKER.matcher(worker);
        assertThat(w.find()).isTrue();
        assertThat(Double.parseDouble(w.group(1))).isEqualTo(12.35);
        assertThat(worker).contains(ProcessCpu.clockName());

        final Matcher mark = ProcessCpu.SWITCH_MARK.matcher("noise\n" + ProcessCpu.switchMarkLine(2_740_000_123L)
            + "\n");
        assertThat(mark.find()).isTrue();
        assertThat(Long.parseLong(mark.group(1))).isEqualTo(2_740_000_123L);
        final Matcher exit = ProcessCpu.SWITCH_EXIT.matcher(ProcessCpu.switchExitLine(3_000_000_456L));
        assertThat(exit.find()).isTrue();
        assertThat(Long.parseLong(exit.group(1))).isEqualTo(3_000_000_456L);
    }

    @Test
    void shouldPrintNothingWhereTheClockIsUnknown()
    {
        assertThat(ProcessCpu.workerLine(-1, 10)).isNull();
        assertThat(ProcessCpu.workerLine(1_000, 0)).isNull();
        assertThat(ProcessCpu.switchMarkLine(-1)).isNull();
        assertThat(ProcessCpu.switchExitLine(-1)).isNull();
    }
}
