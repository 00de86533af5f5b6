package org.inagg.services.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.util.regex.Pattern;

/**
 * The CPU time of this process (every thread, ended ones too: the agent's, the JIT's, the GC's; user and system), to
 * the nanosecond through {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)} (the JVM's own figure counts 10 ms ticks on
 * Linux, too coarse for a few all-reduces), as the lines
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
    private static final com.sun.management.OperatingSystemMXBean OS = osBean();

    private ProcessCpu()
    {
    }

    /** This process's CPU time so far in ns; -1 where the JVM cannot say. */
    public static long nanos()
    {
        if (CLOCK_GETTIME != null)
        {
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment time = arena.allocate(2 * Long.BYTES, Long.BYTES);
                if ((int)CLOCK_GETTIME.invokeExact(CLOCK_PROCESS_CPUTIME_ID, time) == 0)
                {
                    return time.get(ValueLayout.JAVA_LONG, 0) * 1_000_000_000L + time.get(ValueLayout.JAVA_LONG, 8);
                }
            }
            catch (final Throwable ex)
            {
                // fall through to the JVM's figure
            }
        }
        return OS == null ? -1 : OS.getProcessCpuTime();
    }

    /** The worker's line for {@code cpuNanos} over {@code iterations} all-reduces; null when the JVM cannot say. */
    public static String workerLine(final long cpuNanos, final int iterations)
    {
        return cpuNanos < 0 || iterations < 1 ? null : String.format(java.util.Locale.ROOT,
            "  %-22s %.2f ms per all-reduce (this process, every thread, over the timed all-reduces)", "cpu",
            cpuNanos / 1e6 / iterations);
    }

    /** The switch's line at the end of the workers' warm-up; null when the JVM cannot say. */
    public static String switchMarkLine(final long cpuNanos)
    {
        return cpuNanos < 0 ? null : "  cpu at the warm-up's end " + cpuNanos + " ns (this process, every thread)";
    }

    /** {@code int clock_gettime(clockid_t, struct timespec *)} on 64-bit Linux; null elsewhere or if not linkable. */
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

    /** The switch's line at exit; null when the JVM cannot say. */
    public static String switchExitLine(final long cpuNanos)
    {
        return cpuNanos < 0 ? null : "  cpu at exit " + cpuNanos + " ns (this process, every thread)";
    }

    private static com.sun.management.OperatingSystemMXBean osBean()
    {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
            && os.getProcessCpuTime() >= 0 ? os : null;
    }
}
