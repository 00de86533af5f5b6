package org.inagg.services.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The process CPU clock and the lines bench-peers reads back. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ProcessCpuTest
{
    @Test
    void shouldCountTheCpuThisProcessSpendsToBetterThanATick()
    {
        final long before = ProcessCpu.nanos();
        final long wallBefore = System.nanoTime();
        long sink = 0;
        while (System.nanoTime() - wallBefore < 200_000_000L)
        {
            sink += Long.numberOfTrailingZeros(sink + System.nanoTime());
        }
        final long spent = ProcessCpu.nanos() - before;
        final long wall = System.nanoTime() - wallBefore;

        assertThat(before).isPositive();
        assertThat(sink).isNotNegative();
        // At least what a busy thread on a shared machine gets in most of that time, at most every core the whole time.
        assertThat(spent).isGreaterThan(20_000_000L)
            .isLessThanOrEqualTo(wall * Runtime.getRuntime().availableProcessors() + 50_000_000L);
        // clock_gettime(CLOCK_PROCESS_CPUTIME_ID), not 10 ms ticks: two readings around a little work differ by less.
        final long a = ProcessCpu.nanos();
        final long b = ProcessCpu.nanos();
        assertThat(b - a).isBetween(0L, 5_000_000L);
        assertThat(a % 10_000_000L != 0 || b % 10_000_000L != 0).isTrue();
    }

    @Test
    void shouldWriteLinesThatItsPatternsReadBack()
    {
        final String worker = ProcessCpu.workerLine(123_456_789L, 10);
        final Matcher w = ProcessCpu.WORKER.matcher(worker);
        assertThat(w.find()).isTrue();
        assertThat(Double.parseDouble(w.group(1))).isEqualTo(12.35);

        final Matcher mark = ProcessCpu.SWITCH_MARK.matcher("noise\n" + ProcessCpu.switchMarkLine(2_740_000_123L)
            + "\n");
        assertThat(mark.find()).isTrue();
        assertThat(Long.parseLong(mark.group(1))).isEqualTo(2_740_000_123L);
    }

    @Test
    void shouldPrintNothingWhereTheClockIsUnknown()
    {
        assertThat(ProcessCpu.workerLine(-1, 10)).isNull();
        assertThat(ProcessCpu.workerLine(1_000, 0)).isNull();
        assertThat(ProcessCpu.switchMarkLine(-1)).isNull();
    }
}
