package org.inagg.services.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.regex.Pattern;

import com.sun.management.OperatingSystemMXBean;

/**
 * The CPU time of this process (every thread, ended ones too: the agent's, the JIT's, the GC's; user and system), to
 * the nanosecond through {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)} (the JVM's own figure counts 10 ms ticks on
 * Linux, too coarse for a few all-reduces; it is the fallback elsewhere, and the lines name the clock), as the lines
 * {@code bench-peers} reads to put a CPU cost beside each peer's rate: a worker prints {@link #workerLine} for its
 * timed all-reduces, a switch {@link #switchMarkLine} once the workers' warm-up has been aggregated and
 * {@link #switchExitLine} when the benchmark stops it, as soon as the workers are done.
 */
public final class ProcessCpu
{
    /** A worker's line: its process's CPU per timed all-reduce, in ms. */
    public static final Pattern WORKER = Pattern.compile("cpu\\s+([0-9.]+) ms per all-reduce");
    /** A switch's line: its process's CPU, in ns, when the workers' warm-up had been aggregated. */
    public static final Pattern SWITCH_MARK = Pattern.compile("cpu at the warm-up's end\\s+([0-9]+) ns");
    /** A switch's line at exit: its process's CPU, in ns. */
    public static final Pattern SWITCH_EXIT = Pattern.compile("cpu at exit\\s+([0-9]+) ns");

    private static final int CLOCK_PROCESS_CPUTIME_ID = 2;
    private static final MethodHandle CLOCK_GETTIME = clockGettime();

    private ProcessCpu()
    {
    }

    /**
     * This process's CPU time so far in ns, from the one clock {@link #clockName} names (never a mix of the two); -1
     * where it cannot say.
     */
    public static long nanos()
    {
        if (CLOCK_GETTIME == null)
        {
            return JvmClock.nanos();
        }
        try (Arena arena = Arena.ofConfined())
        {
            // struct timespec on 64-bit Linux: { time_t tv_sec; long tv_nsec; }, two 8-byte fields.
            final MemorySegment time = arena.allocate(2 * Long.BYTES, Long.BYTES);
            return (int)CLOCK_GETTIME.invokeExact(CLOCK_PROCESS_CPUTIME_ID, time) != 0 ? -1
                : time.get(ValueLayout.JAVA_LONG, 0) * 1_000_000_000L + time.get(ValueLayout.JAVA_LONG, 8);
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("clock_gettime: " + ex, ex); // invokeExact declares Throwable
        }
    }

    /** Which clock {@link #nanos} reads: {@code clock_gettime} (ns) or the JVM's 10 ms ticks. */
    public static String clockName()
    {
        return CLOCK_GETTIME != null ? "clock_gettime" : "JVM ticks";
    }

    /** The worker's line for {@code cpuNanos} over {@code iterations} all-reduces; null when the clock cannot say. */
    public static String workerLine(final long cpuNanos, final int iterations)
    {
        return cpuNanos < 0 || iterations < 1 ? null : String.format(Locale.ROOT,
            "  %-22s %.2f ms per all-reduce (this process, every thread, over the timed all-reduces; %s)", "cpu",
            cpuNanos / 1e6 / iterations, clockName());
    }

    /** The switch's line at the end of the workers' warm-up; null when the clock cannot say. */
    public static String switchMarkLine(final long cpuNanos)
    {
        return cpuNanos < 0 ? null : "  cpu at the warm-up's end " + cpuNanos + " ns (this process, every thread; "
            + clockName() + ")";
    }

    /** The switch's line at exit; null when the clock cannot say. */
    public static String switchExitLine(final long cpuNanos)
    {
        return cpuNanos < 0 ? null : "  cpu at exit " + cpuNanos + " ns (this process, every thread; " + clockName()
            + ")";
    }

    /**
     * {@code int clock_gettime(clockid_t, struct timespec *)} on 64-bit Linux (where the timespec above is two longs);
     * null elsewhere or if not linkable.
     */
    private static MethodHandle clockGettime()
    {
        if (!System.getProperty("os.name", "").startsWith("Linux") || ValueLayout.ADDRESS.byteSize() != Long.BYTES)
        {
            return null;
        }
        try
        {
            final Linker linker = Linker.nativeLinker();
            return linker.defaultLookup().find("clock_gettime").map(symbol -> linker.downcallHandle(symbol,
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS))).orElse(null);
        }
        catch (final RuntimeException | LinkageError ex)
        {
            return null;
        }
    }

    /** The JVM's process CPU figure, loaded only when clock_gettime is not there (java.management may be absent). */
    private static final class JvmClock
    {
        private static final OperatingSystemMXBean OS = osBean();

        static long nanos()
        {
            return OS == null ? -1 : OS.getProcessCpuTime();
        }

        private static OperatingSystemMXBean osBean()
        {
            try
            {
                return ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os
                    && os.getProcessCpuTime() >= 0 ? os : null;
            }
            catch (final RuntimeException | LinkageError ex)
            {
                return null;
            }
        }
    }
}
