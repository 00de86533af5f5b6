package org.inagg.perf.lab;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What an {@code inagg worker} process printed, read back: its result checksum, rate, retransmissions and whether its
 * own check passed (float32: every element within the fixed-point bound; int32: the exact sum).
 *
 * @param worker            the worker id.
 * @param exitCode          the process's exit status (-1: killed at the time limit).
 * @param crc32             CRC-32 of the result tensor, or null if the worker printed none.
 * @param elementsPerSecond elements all-reduced per second (NaN if not printed).
 * @param retransmissions   packets sent again (-1 if not printed).
 * @param correct           the worker's result check passed.
 * @param output            everything it printed.
 */
public record WorkerReport(
    int worker, int exitCode, String crc32, double elementsPerSecond, long retransmissions, boolean correct,
    String output)
{
    private static final Pattern CRC = Pattern.compile("result crc32\\s+([0-9a-f]{8})");
    private static final Pattern RATE = Pattern.compile("elements/s\\s+([0-9.eE+-]+)");
    private static final Pattern RETRANSMISSIONS = Pattern.compile("retransmissions\\s+([0-9,]+)");
    private static final Pattern CHECK = Pattern.compile("(within bound|exact int32 sum)\\s+yes");

    public static WorkerReport parse(final int worker, final int exitCode, final String output)
    {
        final Matcher crc = CRC.matcher(output);
        final Matcher rate = RATE.matcher(output);
        final Matcher retransmissions = RETRANSMISSIONS.matcher(output);
        return new WorkerReport(worker, exitCode, crc.find() ? crc.group(1) : null,
            rate.find() ? Double.parseDouble(rate.group(1)) : Double.NaN,
            retransmissions.find() ? Long.parseLong(retransmissions.group(1).replace(",", "")) : -1,
            exitCode == 0 && CHECK.matcher(output).find(), output);
    }

    /** The worker finished and its own result check passed. */
    public boolean ok()
    {
        return exitCode == 0 && correct && crc32 != null;
    }
}
