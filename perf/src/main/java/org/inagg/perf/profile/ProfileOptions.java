package org.inagg.perf.profile;

import java.nio.file.Path;
import java.util.List;

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

    /** Whether a run's JVM options ask for profiles. */
    public static boolean profiling(final List<String> jvmOptions)
    {
        return jvmOptions.stream().anyMatch(option -> option.startsWith("-D" + ProfileWindow.DIR + "="));
    }

    /** The switch's extra option: start after the warm-up's {@code contributions} (workers x packets x warm-ups). */
    public static String switchStartsAfter(final long contributions)
    {
        return "-D" + ProfileWindow.AFTER_CONTRIBUTIONS + "=" + contributions;
    }
}
