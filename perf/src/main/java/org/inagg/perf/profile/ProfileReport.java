package org.inagg.perf.profile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import one.convert.Arguments;
import one.convert.FlameGraph;

/**
 * What {@code bench-peers --profile DIR} leaves in DIR: one HTML flame graph per process next to its collapsed stacks,
 * and {@code summary.md}, a table of where each role's CPU went (all workers summed), in CPU milliseconds and shares.
 */
public final class ProfileReport
{
    private ProfileReport()
    {
    }

    /**
     * Writes the flame graphs and the summary of every {@code <role>-<pid>.collapsed} in {@code dir}.
     *
     * @return the summary's text (Markdown), or a line saying that no process left a profile.
     */
    public static String write(final Path dir)
    {
        final Map<String, StackProfile> byRole = new TreeMap<>();
        final Map<String, Integer> processes = new TreeMap<>();
        for (final Path file : collapsedFiles(dir))
        {
            final String name = file.getFileName().toString();
            final String base = name.substring(0, name.length() - ProfileOptions.COLLAPSED.length());
            final String role = base.contains("-") ? base.substring(0, base.lastIndexOf('-')) : base;
            byRole.computeIfAbsent(role, r -> new StackProfile()).add(StackProfile.read(file));
            processes.merge(role, 1, Integer::sum);
            flameGraph(file, dir.resolve(base + ".html"), base);
        }
        if (byRole.isEmpty())
        {
            return "no inagg process left a profile in " + dir + "\n";
        }
        final String summary = summary(byRole, processes);
        try
        {
            Files.writeString(dir.resolve("summary.md"), summary);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write " + dir.resolve("summary.md") + ": " + ex.getMessage(), ex);
        }
        return summary;
    }

    /** The table: one row per category, one column pair (ms, share) per role. */
    static String summary(final Map<String, StackProfile> byRole, final Map<String, Integer> processes)
    {
        final double msPerSample = ProfileOptions.MS_PER_SAMPLE;
        final StringBuilder out = new StringBuilder();
        out.append("CPU of the inagg processes by role (async-profiler, ").append(msPerSample)
            .append( " ms of CPU per sample; workers: their timed all-reduces; the switch: from the end of the warm-up to its"
                + " exit). Share: of all")
            .append(" the role's samples; datapath: of its agent threads' samples only\n\n| where |");
        final StringBuilder rule = new StringBuilder("|---|");
        byRole.forEach((role, profile) ->
        {
            out.append(String.format(Locale.ROOT, " %s x%d: CPU ms | share | datapath |", role, processes.get(role)));
            rule.append("---:|---:|---:|");
        });
        out.append('\n').append(rule).append('\n');
        for (final CpuCategory category : CpuCategory.values())
        {
            if (byRole.values().stream().allMatch(p -> p.samples(category) == 0))
            {
                continue;
            }
            out.append("| ").append(category.label()).append(" |");
            byRole.values().forEach(p -> out.append(String.format(Locale.ROOT, " %,.0f | %.1f %% | %s |",
                p.samples(category) * msPerSample, percent(p.samples(category), p.total()),
                category.onAgentThread() ? String.format(Locale.ROOT, "%.1f %%",
                    percent(p.samples(category), p.agentSamples())) : "")));
            out.append('\n');
        }
        out.append("| **total** |");
        byRole.values().forEach(p -> out.append(String.format(Locale.ROOT, " **%,.0f** | 100 %% | %,.0f ms |",
            p.total() * msPerSample, p.agentSamples() * msPerSample)));
        out.append("\n| of which in the kernel |");
        byRole.values().forEach(p -> out.append(String.format(Locale.ROOT, " %,.0f | %.1f %% | |",
            p.kernel() * msPerSample, percent(p.kernel(), p.total()))));
        out.append('\n');
        return out.toString();
    }

    private static double percent(final long part, final long whole)
    {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }

    private static List<Path> collapsedFiles(final Path dir)
    {
        try (Stream<Path> files = Files.list(dir))
        {
            return new ArrayList<>(files.filter(f -> f.getFileName().toString().endsWith(ProfileOptions.COLLAPSED))
                .sorted().toList());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot list the profiles in " + dir + ": " + ex.getMessage(), ex);
        }
    }

    private static void flameGraph(final Path collapsed, final Path html, final String title)
    {
        try
        {
            FlameGraph.convert(collapsed.toString(), html.toString(), new Arguments("--title", title));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write the flame graph " + html + ": " + ex.getMessage(), ex);
        }
    }
}
