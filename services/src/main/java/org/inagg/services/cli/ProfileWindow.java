package org.inagg.services.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

import one.profiler.AsyncProfiler;
import one.profiler.Counter;

/**
 * A process's own CPU profile over its steady state, for {@code bench-peers --profile}: with the system property
 * {@value #DIR} set, {@link #start()} starts async-profiler (CPU samples every millisecond of CPU, kernel frames
 * included, per thread) and {@link #stopAndWrite()} writes the collapsed stacks to {@code DIR/ROLE-PID.collapsed}. A
 * worker profiles its timed all-reduces, after its warm-up; a switch from the end of the warm-up's contributions
 * ({@value #AFTER_CONTRIBUTIONS}) to its exit. Without the property, or where the profiler cannot load, it does
 * nothing (saying why once).
 */
public final class ProfileWindow
{
    /** Folder for the profile; unset: no profile. */
    public static final String DIR = "inagg.profile.dir";
    /**
     * A switch prints its CPU time ({@link ProcessCpu}) and starts its profile (with {@value #DIR}) once it has
     * aggregated this many contributions (the workers' warm-up), and prints its CPU time again at exit.
     */
    public static final String AFTER_CONTRIBUTIONS = "inagg.profile.after-contributions";

    private static final String START = "start,event=cpu,interval=1000000,threads";

    private final Path file;
    private final PrintStream err;
    private AsyncProfiler profiler;
    private boolean running;

    private ProfileWindow(final Path file, final PrintStream err)
    {
        this.file = file;
        this.err = err;
    }

    /** The window of a process of this role ({@code worker}, {@code switch}), off unless {@value #DIR} is set. */
    public static ProfileWindow forRole(final String role, final PrintStream err)
    {
        final String dir = System.getProperty(DIR);
        return new ProfileWindow(dir == null || dir.isBlank() ? null
            : Path.of(dir, role + "-" + ProcessHandle.current().pid() + ".collapsed"), err);
    }

    public boolean enabled()
    {
        return file != null;
    }

    /** Starts sampling; nothing when off or already running. */
    public synchronized void start()
    {
        if (file == null || running)
        {
            return;
        }
        try
        {
            profiler = AsyncProfiler.getInstance();
            profiler.execute(START);
            running = true;
        }
        catch (final IOException | RuntimeException | UnsatisfiedLinkError ex)
        {
            err.println("inagg: no profile (" + DIR + "=" + file.getParent() + "): async-profiler did not start: " + ex);
        }
    }

    /** Stops sampling and writes the collapsed stacks; nothing when not running. */
    public synchronized void stopAndWrite()
    {
        if (!running)
        {
            return;
        }
        running = false;
        try
        {
            profiler.execute("stop");
            Files.writeString(file, profiler.dumpCollapsed(Counter.SAMPLES));
        }
        catch (final IOException | RuntimeException ex)
        {
            err.println("inagg: cannot write the profile " + file + ": " + ex);
        }
    }
}
