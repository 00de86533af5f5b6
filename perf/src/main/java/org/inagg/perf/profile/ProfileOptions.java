package org.inagg.perf.profile;

import java.nio.file.Path;

import org.inagg.services.cli.ProfileWindow;

/**
 * The JVM options that make the inagg processes of a benchmark profile themselves ({@link ProfileWindow}): each worker
 * its timed all-reduces, the switch its run after the workers' warm-up, into {@code DIR/ROLE-PID.collapsed}.
 */
public final class ProfileOptions
{
    /** Milliseconds of CPU per sample (ProfileWindow samples every millisecond of CPU). */
    public static final double MS_PER_SAMPLE = 1.0;
    /** The suffix of the stacks files. */
    public static final String COLLAPSED = ".collapsed";

    private ProfileOptions()
    {
    }

    /** The option every inagg process of the run gets. */
    public static String jvmOption(final Path dir)
    {
        return "-D" + ProfileWindow.DIR + "=" + dir.toAbsolutePath();
    }

    /**
     * The switch's extra option, profiling or not: mark its CPU (and start its profile) after the warm-up's {@code
     * contributions} (workers x packets x warm-ups).
     */
    public static String switchStartsAfter(final long contributions)
    {
        return "-D" + ProfileWindow.AFTER_CONTRIBUTIONS + "=" + contributions;
    }
}
