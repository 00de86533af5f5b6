package org.inagg.perf.peers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;

/** A PNG bar chart of a {@link PeerTable}: elements/s on a log axis, one group of bars per world size. */
public final class PeerChart
{
    private PeerChart()
    {
    }

    /** Writes the chart to {@code file} (a .png); peers with no measurement at all are left out of it. */
    public static void write(final PeerTable table, final String title, final Path file)
    {
        final List<String> sizes = table.worldSizes().stream().map(w -> w + " ranks").toList();
        final CategoryChart chart = new CategoryChartBuilder().width(1000).height(560).title(title)
            .xAxisTitle("world size").yAxisTitle("elements/s per all-reduce").build();
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.OutsideS);
        boolean any = false;
        double smallest = Double.POSITIVE_INFINITY;
        double largest = 0;
        for (final String peer : table.peers())
        {
            final List<Double> values = new ArrayList<>();
            boolean measured = false;
            for (final int size : table.worldSizes())
            {
                final OptionalDouble rate = table.rate(peer, size);
                // A log axis cannot draw 0: an unmeasured cell is a missing point (no bar).
                values.add(rate.isPresent() ? rate.getAsDouble() : null);
                measured |= rate.isPresent();
                if (rate.isPresent())
                {
                    smallest = Math.min(smallest, rate.getAsDouble());
                    largest = Math.max(largest, rate.getAsDouble());
                }
            }
            if (measured)
            {
                chart.addSeries(peer, sizes, values);
                any = true;
            }
        }
        if (!any)
        {
            return;
        }
        // Whole decades around the figures: XChart's own range for bars on a log axis starts at 0.
        chart.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(smallest / 3))));
        chart.getStyler().setYAxisMax(Math.pow(10, Math.ceil(Math.log10(largest * 1.01))));
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
