package org.inagg.perf.peers;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * The results of a {@code bench-peers} run side by side: one row per peer, one column per world size, each cell the
 * elements/s and its ratio to the baseline peer (gloo) at the same world size; then, where peers reported it, the CPU
 * time of all their processes per all-reduce, per MiB of tensor and against the baseline's (what decides when the
 * processes share too few cores); below them, every skipped or failed peer with its reason and the notes of the
 * measured ones.
 */
public final class PeerTable
{
    private final List<PeerResult> results;
    private final String baseline;
    private final long tensorBytes;

    public PeerTable(final List<PeerResult> results, final String baseline)
    {
        this(results, baseline, 0);
    }

    /** @param tensorBytes the bytes of one tensor, for the CPU per MiB (0: not shown). */
    public PeerTable(final List<PeerResult> results, final String baseline, final long tensorBytes)
    {
        this.results = List.copyOf(results);
        this.baseline = baseline;
        this.tensorBytes = tensorBytes;
    }

    public List<PeerResult> results()
    {
        return results;
    }

    /** Peers in the order they first appear. */
    public List<String> peers()
    {
        final Set<String> names = new LinkedHashSet<>();
        results.forEach(r -> names.add(r.peer()));
        return List.copyOf(names);
    }

    /** World sizes in the order they first appear. */
    public List<Integer> worldSizes()
    {
        final Set<Integer> sizes = new LinkedHashSet<>();
        results.forEach(r -> sizes.add(r.workers()));
        return List.copyOf(sizes);
    }

    /** The measured elements/s of {@code peer} at {@code workers}, if any. */
    public OptionalDouble rate(final String peer, final int workers)
    {
        for (final PeerResult r : results)
        {
            if (r.peer().equals(peer) && r.workers() == workers && r.isMeasured())
            {
                return OptionalDouble.of(r.elementsPerSecond());
            }
        }
        return OptionalDouble.empty();
    }

    /** {@code peer}'s rate over the baseline's at the same world size, when both were measured. */
    public OptionalDouble ratioToBaseline(final String peer, final int workers)
    {
        final OptionalDouble rate = rate(peer, workers);
        final OptionalDouble base = rate(baseline, workers);
        return rate.isPresent() && base.isPresent() && base.getAsDouble() > 0
            ? OptionalDouble.of(rate.getAsDouble() / base.getAsDouble()) : OptionalDouble.empty();
    }

    /** The table as text, {@code heading} first. */
    public String format(final String heading)
    {
        final StringBuilder text = new StringBuilder(heading).append('\n');
        final List<String> peers = peers();
        final List<Integer> sizes = worldSizes();
        final int nameWidth = Math.max(4, peers.stream().mapToInt(String::length).max().orElse(4));
        final int cellWidth = 30;
        text.append(String.format(Locale.ROOT, "%-" + nameWidth + "s", "peer"));
        for (final int size : sizes)
        {
            text.append(" | ").append(String.format(Locale.ROOT, "%-" + cellWidth + "s", size + " ranks"));
        }
        text.append('\n').append("-".repeat(nameWidth));
        sizes.forEach(size -> text.append("-+-").append("-".repeat(cellWidth)));
        text.append('\n');
        for (final String peer : peers)
        {
            text.append(String.format(Locale.ROOT, "%-" + nameWidth + "s", peer));
            for (final int size : sizes)
            {
                text.append(" | ").append(String.format(Locale.ROOT, "%-" + cellWidth + "s", cell(peer, size)));
            }
            text.append('\n');
        }
        if (results.stream().anyMatch(r -> r.isMeasured() && Double.isFinite(r.cpuSecondsPerOp())))
        {
            text.append("CPU per all-reduce, all of a peer's processes over the timed all-reduces (per MiB of tensor,"
                + " ratio to ").append(baseline).append("'s):\n");
            for (final String peer : peers)
            {
                text.append(String.format(Locale.ROOT, "%-" + nameWidth + "s", peer));
                for (final int size : sizes)
                {
                    text.append(" | ").append(String.format(Locale.ROOT, "%-" + cellWidth + "s", cpuCell(peer, size)));
                }
                text.append('\n');
            }
        }
        final List<String> notes = new ArrayList<>();
        for (final PeerResult r : results)
        {
            if (!r.note().isEmpty())
            {
                notes.add(String.format(Locale.ROOT, "  %s, %d ranks: %s%s", r.peer(), r.workers(),
                    r.isMeasured() ? "" : r.status().name().toLowerCase(Locale.ROOT) + ": ", r.note()));
            }
        }
        if (!notes.isEmpty())
        {
            text.append("notes:\n");
            notes.forEach(n -> text.append(n).append('\n'));
        }
        return text.toString();
    }

    /** {@code peer}'s CPU per all-reduce over the baseline's at the same world size, when both reported it. */
    public OptionalDouble cpuRatioToBaseline(final String peer, final int workers)
    {
        final OptionalDouble cpu = cpuSecondsPerOp(peer, workers);
        final OptionalDouble base = cpuSecondsPerOp(baseline, workers);
        return cpu.isPresent() && base.isPresent() && base.getAsDouble() > 0
            ? OptionalDouble.of(cpu.getAsDouble() / base.getAsDouble()) : OptionalDouble.empty();
    }

    /** The CPU of all {@code peer}'s processes per all-reduce at {@code workers}, in seconds, where it reported it. */
    public OptionalDouble cpuSecondsPerOp(final String peer, final int workers)
    {
        for (final PeerResult r : results)
        {
            if (r.peer().equals(peer) && r.workers() == workers && r.isMeasured()
                && Double.isFinite(r.cpuSecondsPerOp()))
            {
                return OptionalDouble.of(r.cpuSecondsPerOp());
            }
        }
        return OptionalDouble.empty();
    }

    private String cpuCell(final String peer, final int workers)
    {
        final OptionalDouble cpu = cpuSecondsPerOp(peer, workers);
        if (cpu.isEmpty())
        {
            return "-";
        }
        final double ms = cpu.getAsDouble() * 1e3;
        final List<String> extra = new ArrayList<>();
        if (tensorBytes > 0)
        {
            extra.add(String.format(Locale.ROOT, "%.2f ms/MiB", ms / (tensorBytes / (double)(1 << 20))));
        }
        cpuRatioToBaseline(peer, workers).ifPresent(ratio -> extra.add(String.format(Locale.ROOT, "%.2fx", ratio)));
        return String.format(Locale.ROOT, "%.1f ms", ms) + (extra.isEmpty() ? "" : " (" + String.join(", ", extra)
            + ")");
    }

    private String cell(final String peer, final int workers)
    {
        for (final PeerResult r : results)
        {
            if (r.peer().equals(peer) && r.workers() == workers)
            {
                if (!r.isMeasured())
                {
                    return r.status().name().toLowerCase(Locale.ROOT);
                }
                final OptionalDouble ratio = ratioToBaseline(peer, workers);
                return String.format(Locale.ROOT, "%.3e", r.elementsPerSecond())
                    + (ratio.isPresent() ? String.format(Locale.ROOT, " (%.3fx %s)", ratio.getAsDouble(), baseline)
                        : "");
            }
        }
        return "-";
    }
}
