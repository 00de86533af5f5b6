package org.inagg.services.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.inagg.agent.counters.CountersDirectory;
import org.inagg.agent.counters.CountersFileReader;
import org.inagg.agent.counters.CountersSnapshot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code inagg stat}: the counters of the inagg processes on this machine, read from their counters files (mapped
 * read-only; the processes are not disturbed), like AeronStat. With {@code --watch}, or {@code --count} of 2 or more,
 * rates per second between samples.
 */
@Command(
    name = "stat",
    mixinStandardHelpOptions = true,
    description = {"Print the counters of running inagg processes (switch, worker, ps, local) from their counters "
        + "files, with rates per second between samples under --watch or --count 2+; list the files of processes "
        + "that are gone (stale) and, with --clean, remove them."})
public final class StatCommand implements Callable<Integer>
{
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    @Spec
    private CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "PID|NAME",
        description = "Only the process with this pid, or whose role (switch, worker, ps, local) is NAME or whose "
            + "description contains it.")
    private String filter;

    @Option(names = "--watch", description = "Print again every --interval seconds, with rates, until stopped (Ctrl-C).")
    private boolean watch;

    @Option(names = "--interval", paramLabel = "S", defaultValue = "1",
        description = "Seconds between samples (default ${DEFAULT-VALUE}).")
    private double intervalSeconds;

    @Option(names = "--count", paramLabel = "N",
        description = "Samples to take, --interval apart (default 1, or until stopped with --watch); without --watch "
            + "only the last is printed, with rates over the last interval.")
    private Integer count;

    @Option(names = "--clean", description = "Remove the counters files of processes that are gone.")
    private boolean clean;

    @Option(names = "--counters-dir", paramLabel = "DIR",
        description = "Where the counters files are (default: $INAGG_DIR, else /dev/shm/inagg, else "
            + "<java.io.tmpdir>/inagg).")
    private String directory;

    /** Open readers by path, with the last snapshot of each. */
    private final Map<Path, Watched> watched = new HashMap<>();

    private static final class Watched
    {
        final CountersFileReader reader;
        CountersSnapshot last;

        Watched(final CountersFileReader reader)
        {
            this.reader = reader;
        }
    }

    @Override
    public Integer call() throws IOException, InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        if (!(intervalSeconds > 0))
        {
            throw new IllegalArgumentException("--interval must be positive, got " + intervalSeconds);
        }
        if (count != null && count < 1)
        {
            throw new IllegalArgumentException("--count must be at least 1, got " + count);
        }
        final Path dir = CountersDirectory.resolve(directory);
        final long samples = count != null ? count : watch ? Long.MAX_VALUE : 1;
        final long intervalNs = (long)(intervalSeconds * 1e9);
        final boolean clear = watch && System.console() != null;
        int matched = 0;
        try
        {
            for (long s = 0; s < samples; s++)
            {
                if (s > 0)
                {
                    TimeUnit.NANOSECONDS.sleep(intervalNs);
                }
                final boolean print = watch || s == samples - 1;
                final StringBuilder text = new StringBuilder();
                matched = sample(dir, text, print);
                if (print)
                {
                    if (clear)
                    {
                        out.print("\u001b[H\u001b[2J");
                    }
                    out.print(text);
                    out.flush();
                }
            }
        }
        finally
        {
            watched.values().forEach(w -> w.reader.close());
            watched.clear();
        }
        return filter != null && matched == 0 && !watch ? 1 : 0;
    }

    /** Takes one sample of every file; writes the report into {@code text}; returns the live processes matched. */
    private int sample(final Path dir, final StringBuilder text, final boolean print) throws IOException
    {
        final List<Path> files = CountersDirectory.files(dir);
        // Forget files that went away (their processes exited cleanly).
        watched.entrySet().removeIf(entry ->
        {
            if (!files.contains(entry.getKey()))
            {
                entry.getValue().reader.close();
                return true;
            }
            return false;
        });
        final List<String> problems = new ArrayList<>();
        final List<CountersFileReader> stale = new ArrayList<>();
        final List<Watched> live = new ArrayList<>();
        for (final Path file : files)
        {
            Watched w = watched.get(file);
            if (w == null)
            {
                try
                {
                    w = new Watched(CountersFileReader.open(file));
                    watched.put(file, w);
                }
                catch (final IOException | RuntimeException ex)
                {
                    problems.add(file.getFileName() + ": " + ex.getMessage());
                    continue;
                }
            }
            if (!matches(w.reader))
            {
                continue;
            }
            if (w.reader.isStale())
            {
                stale.add(w.reader);
            }
            else
            {
                live.add(w);
            }
        }

        text.append(String.format("inagg stat: %s, %d process%s%s, %s%n", dir, live.size(),
            live.size() == 1 ? "" : "es", filter == null ? "" : " matching '" + filter + "'",
            LocalDateTime.now().format(TIME)));
        if (files.isEmpty())
        {
            text.append(String.format("  no counters files (start a switch, worker, ps or local; other directory: "
                + "--counters-dir or INAGG_DIR)%n"));
        }
        for (final Watched w : live)
        {
            final CountersSnapshot now = CountersSnapshot.take(w.reader.counters());
            if (print)
            {
                describe(w.reader, now, w.last, text);
            }
            w.last = now;
        }
        for (final CountersFileReader gone : stale)
        {
            final boolean removed = clean && removeStale(gone);
            text.append(String.format("%s: %s (%s, pid %d, started %s): process gone%s%n",
                removed ? "removed stale" : "stale", gone.path(), gone.role(), gone.pid(), time(gone.startTimeMs()),
                removed ? "" : clean ? ", could not remove it" : "; `inagg stat --clean` removes it"));
        }
        for (final String problem : problems)
        {
            text.append("skipped ").append(problem).append(System.lineSeparator());
        }
        return live.size();
    }

    private boolean removeStale(final CountersFileReader gone)
    {
        final Path path = gone.path();
        watched.remove(path);
        gone.close();
        try
        {
            return Files.deleteIfExists(path) || !Files.exists(path);
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    private boolean matches(final CountersFileReader reader)
    {
        if (filter == null)
        {
            return true;
        }
        if (filter.chars().allMatch(Character::isDigit))
        {
            return Long.toString(reader.pid()).equals(filter);
        }
        return reader.role().equals(filter) || reader.name().contains(filter);
    }

    private static void describe(final CountersFileReader reader, final CountersSnapshot now,
        final CountersSnapshot before, final StringBuilder text)
    {
        final long upSeconds = Math.max(0, (System.currentTimeMillis() - reader.startTimeMs()) / 1000);
        text.append(String.format("%n%s pid %d, up %d:%02d:%02d: %s%n  %s%n", reader.role(), reader.pid(),
            upSeconds / 3600, upSeconds / 60 % 60, upSeconds % 60, reader.name(), reader.path()));
        final double seconds = before == null ? 0 : (now.nanoTime() - before.nanoTime()) / 1e9;
        text.append(String.format("  %4s %5s %20s %16s  %s%n", "id", "type", "value",
            seconds > 0 ? "per second" : "", "counter"));
        for (final CountersSnapshot.Sample sample : now.samples())
        {
            String rate = "";
            if (seconds > 0 && !sample.key().gauge())
            {
                final CountersSnapshot.Sample previous = before.find(sample);
                if (previous != null)
                {
                    rate = String.format(Locale.ROOT, "%,.1f", (sample.value() - previous.value()) / seconds);
                }
            }
            text.append(String.format(Locale.ROOT, "  %4d %5d %,20d %16s  %s%s%n", sample.counterId(),
                sample.typeId(), sample.value(), rate, sample.label(), sample.key().gauge() ? " (now)" : ""));
        }
    }

    private static String time(final long epochMs)
    {
        return LocalDateTime.ofInstant(Instant.ofEpochMilli(epochMs), ZoneId.systemDefault()).format(TIME);
    }
}
