package org.inagg.perf.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The rows of a {@link ClusterBench} as a text table (mean and median time per all-reduce, the links' bound, the
 * fraction of it each reaches, the ratio of the means to a baseline peer at the same hosts and rate, and in column
 * {@code cpu ms} the CPU of all the peer's processes per all-reduce where it reported it) and as a PNG of time against
 * link rate with each peer's bound drawn dashed, so the rate at which a peer stops following its bound (becomes
 * CPU-bound) shows.
 */
public final class ClusterTable
{
    private final List<ClusterBench.Row> rows;
    private final String baseline;

    public ClusterTable(final List<ClusterBench.Row> rows, final String baseline)
    {
        this.rows = List.copyOf(rows);
        this.baseline = baseline;
    }

    /** The baseline's row at the same hosts and rate. */
    private Optional<ClusterBench.Row> baselineOf(final ClusterBench.Row row)
    {
        return rows.stream().filter(r -> r.result().peer().equals(baseline) && r.result().isMeasured()
            && r.result().workers() == row.result().workers() && r.rate().equals(row.rate())).findFirst();
    }

    /** The table, one line per row, then the notes of skipped and failed rows. */
    public String format(final String heading)
    {
        final StringBuilder out = new StringBuilder(heading).append('\n');
        out.append(String.format(Locale.ROOT, "%-36s %5s %12s %13s %8s %10s %8s %8s %8s %8s%n", "peer", "hosts",
            "link", "ms/all-reduce", "p50 ms", "bound ms", "of bound", "p50 of", "x " + baseline, "cpu ms"));
        final List<String> notes = new ArrayList<>();
        for (final ClusterBench.Row row : rows)
        {
            final String peer = row.result().peer();
            if (row.result().isMeasured())
            {
                final Optional<ClusterBench.Row> base = baselineOf(row);
                final double p50 = row.result().p50Seconds();
                final double cpu = row.result().cpuSecondsPerOp();
                out.append(String.format(Locale.ROOT, "%-36s %5d %12s %13.1f %8s %10.1f %8.2f %8s %8s %8s%n", peer,
                    row.result().workers(), row.rate(), row.seconds() * 1e3,
                    Double.isNaN(p50) ? "-" : String.format(Locale.ROOT, "%.1f", p50 * 1e3), row.boundSeconds() * 1e3,
                    row.ofBound(), Double.isNaN(p50) ? "-" : String.format(Locale.ROOT, "%.2f", row.boundSeconds()
                        / p50),
                    base.map(b -> String.format(Locale.ROOT, "%.2fx", b.seconds() / row.seconds())).orElse("-"),
                    Double.isFinite(cpu) ? String.format(Locale.ROOT, "%.1f", cpu * 1e3) : "-"));
                if (!row.result().note().isEmpty())
                {
                    notes.add(String.format(Locale.ROOT, "%s, %d hosts, %s: %s", peer, row.result().workers(),
                        row.rate(), row.result().note()));
                }
            }
            else
            {
                out.append(String.format(Locale.ROOT, "%-36s %5d %12s %13s %8s %10.1f %8s %8s %8s %8s%n", peer,
                    row.result().workers(), row.rate(), row.result().status().name().toLowerCase(Locale.ROOT), "-",
                    row.boundSeconds() * 1e3, "-", "-", "-", "-"));
                notes.add(String.format(Locale.ROOT, "%s, %d hosts, %s: %s", peer, row.result().workers(), row.rate(),
                    row.result().note()));
            }
        }
        if (!notes.isEmpty())
        {
            out.append("notes:\n");
            notes.forEach(note -> out.append("  ").append(note).append('\n'));
        }
        return out.toString();
    }

    /** Writes time per all-reduce against link rate (both axes logarithmic), one line per peer and host count. */
    public void writeChart(final String title, final Path file)
    {
        final XYChart chart = new XYChartBuilder().width(1000).height(620).title(title)
            .xAxisTitle("link rate, Mbit/s (each way, every host)").yAxisTitle("ms per all-reduce").build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.OutsideE);
        final Set<String> series = new LinkedHashSet<>();
        rows.forEach(r -> series.add(r.result().peer() + "|" + r.result().workers()));
        boolean any = false;
        final java.awt.Color[] palette = chart.getStyler().getSeriesColors();
        int colour = 0;
        for (final String key : series)
        {
            final String peer = key.substring(0, key.lastIndexOf('|'));
            final int hosts = Integer.parseInt(key.substring(key.lastIndexOf('|') + 1));
            final List<ClusterBench.Row> mine = rows.stream().filter(r -> r.result().peer().equals(peer)
                && r.result().workers() == hosts).sorted(java.util.Comparator.comparingLong(r -> r.rate()
                .bitsPerSecond())).toList();
            final List<Double> x = new ArrayList<>();
            final List<Double> y = new ArrayList<>();
            final List<Double> bx = new ArrayList<>();
            final List<Double> by = new ArrayList<>();
            for (final ClusterBench.Row row : mine)
            {
                bx.add(row.rate().bitsPerSecond() / 1e6);
                by.add(row.boundSeconds() * 1e3);
                if (row.result().isMeasured())
                {
                    x.add(row.rate().bitsPerSecond() / 1e6);
                    y.add(row.seconds() * 1e3);
                }
            }
            if (x.isEmpty())
            {
                continue;
            }
            any = true;
            final String name = peer + ", " + hosts + " hosts";
            final java.awt.Color color = palette[colour++ % palette.length];
            final XYSeries measured = chart.addSeries(name, x, y);
            measured.setMarker(SeriesMarkers.CIRCLE);
            measured.setLineColor(color);
            measured.setMarkerColor(color);
            final XYSeries bound = chart.addSeries(name + ": bound", bx, by);
            bound.setLineStyle(SeriesLines.DASH_DASH);
            bound.setMarker(SeriesMarkers.NONE);
            bound.setLineColor(color);
        }
        if (!any)
        {
            return;
        }
        try
        {
            BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write the chart " + file + ": " + ex.getMessage(), ex);
        }
    }
}
