package org.inagg.services.cli;

import java.nio.charset.StandardCharsets;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.inagg.p4.softswitch.SwitchJobConfig;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes the {@code --job ID:WORKERS[:SLOTS[:LANES]]} option of {@code inagg switch} and {@code inagg ps}
 * ({@link SwitchCommand#parseJob}, docs/fuzzing.md). Invariants: a bad value fails with an
 * {@link IllegalArgumentException} that has a message, never another exception; a value it accepts has two to four
 * colon-separated numbers, and the job it gives, written back in that form, parses to the same job.
 */
class JobOptionFuzzTest
{
    @FuzzTest(maxDuration = "10s")
    void shouldRejectABadJobWithAMessageAndRoundTripAGoodOne(final byte[] option)
    {
        final String text = new String(option, StandardCharsets.UTF_8);
        final SwitchJobConfig job;
        try
        {
            job = SwitchCommand.parseJob(text, SwitchJobConfig.MTU_FILLING_MAX_LANES);
        }
        catch (final IllegalArgumentException e)
        {
            assertThat(e.getMessage()).isNotBlank();
            return;
        }
        assertThat(text.split(":", -1)).as("parts of '%s'", text).hasSizeBetween(2, 4);
        final SwitchJobConfig again = SwitchCommand.parseJob(job.jobId() + ":" + job.workers() + ":" + job.slots()
            + ":" + job.lanesPerPacket(), SwitchJobConfig.DEFAULT_LANES);
        assertThat(again).isEqualTo(job);
    }
}
