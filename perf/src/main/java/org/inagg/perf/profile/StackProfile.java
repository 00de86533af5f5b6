package org.inagg.perf.profile;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The CPU samples of one process, from async-profiler's collapsed stacks with threads
 * ({@code [thread tid=N];outer;...;leaf COUNT} per line), summed per {@link CpuCategory}, with the share of samples
 * whose leaf is in the kernel.
 */
public final class StackProfile
{
    private final Map<CpuCategory, Long> samples = new EnumMap<>(CpuCategory.class);
    private long total;
    private long kernel;

    /** Reads a collapsed-stacks file; a line that is not {@code stack count} is skipped. */
    public static StackProfile read(final Path file)
    {
        final StackProfile profile = new StackProfile();
        try (BufferedReader in = Files.newBufferedReader(file))
        {
            String line;
            while ((line = in.readLine()) != null)
            {
                profile.add(line);
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read the profile " + file + ": " + ex.getMessage(), ex);
        }
        return profile;
    }

    /** Adds one line of collapsed stacks. */
    public void add(final String line)
    {
        final int space = line.lastIndexOf(' ');
        if (space <= 0)
        {
            return;
        }
        final long count;
        try
        {
            count = Long.parseLong(line.substring(space + 1).trim());
        }
        catch (final NumberFormatException ex)
        {
            return;
        }
        final List<String> frames = Arrays.asList(line.substring(0, space).split(";"));
        String thread = "";
        List<String> stack = frames;
        if (frames.getFirst().startsWith("["))
        {
            thread = frames.getFirst().substring(1, Math.max(1, frames.getFirst().length() - 1));
            stack = frames.subList(1, frames.size());
        }
        samples.merge(CpuCategory.of(thread, stack), count, Long::sum);
        total += count;
        if (!stack.isEmpty() && stack.getLast().endsWith("_[k]"))
        {
            kernel += count;
        }
    }

    /** Adds another process's samples (all workers as one). */
    public void add(final StackProfile other)
    {
        other.samples.forEach((category, count) -> samples.merge(category, count, Long::sum));
        total += other.total;
        kernel += other.kernel;
    }

    public long samples(final CpuCategory category)
    {
        return samples.getOrDefault(category, 0L);
    }

    public long total()
    {
        return total;
    }

    /** Samples on the agent threads (the datapath). */
    public long agentSamples()
    {
        long sum = 0;
        for (final CpuCategory category : CpuCategory.values())
        {
            sum += category.onAgentThread() ? samples(category) : 0;
        }
        return sum;
    }

    /** Samples whose innermost frame is the kernel's (system calls, softirq, the scheduler). */
    public long kernel()
    {
        return kernel;
    }
}
