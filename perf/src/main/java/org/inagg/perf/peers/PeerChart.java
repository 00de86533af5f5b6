package org.inagg.perf.peers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.function.BiFunction;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;

/**
 * PNG bar charts of a {@link PeerTable}, one group of bars per world size on a log axis: elements/s ({@link #write}),
 * and the CPU of all a peer's processes per all-reduce ({@link #writeCpu}: what decides the rate where the processes
 * share too few cores).
 */
public final class PeerChart
{
    private PeerChart()
    {
    }

    /**
     * Writes the rates to {@code file} (a .png); peers with no measurement at all are left out of it.
     *
     * @return whether the file was written (not when no peer was measured).
     */
    public static boolean write(final PeerTable table, final String title, final Path file)
    {
        return draw(table, title, "elements/s per all-reduce", table::rate, file);
    }

    /**
     * Writes the CPU per all-reduce (ms, all of a peer's processes) to {@code file}; peers that reported none are left
     * out, and with none at all nothing is written.
     *
     * @return whether the file was written.
     */
    public static boolean writeCpu(final PeerTable table, final String title, final Path file)
    {
        return draw(table, title, "CPU ms per all-reduce (all processes)", (peer, size) ->
        {
            final OptionalDouble seconds = table.cpuSecondsPerOp(peer, size);
            return seconds.isPresent() ? OptionalDouble.of(seconds.getAsDouble() * 1e3) : seconds;
        }, file);
    }

    /** The chart file beside {@code ratesFile} for the CPU: {@code NAME-cpu.png}. */
    public static Path cpuFileBeside(final Path ratesFile)
    {
        final String name = ratesFile.getFileName().toString();
        final int dot = name.lastIndexOf('.');
        return ratesFile.resolveSibling((dot > 0 ? name.substring(0, dot) : name) + "-cpu"
            + (dot > 0 ? name.substring(dot) : ".png"));
    }

    private static boolean draw(final PeerTable table, final String title, final String yTitle,
        final BiFunction<String, Integer, OptionalDouble> value, final Path file)
    {
        final List<String> sizes = table.worldSizes().stream().map(w -> w + " ranks").toList();
        final CategoryChart chart = new CategoryChartBuilder().width(1000).height(560).title(title)
            .xAxisTitle("world size").yAxisTitle(yTitle).build();
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
                final OptionalDouble v = value.apply(peer, size);
                // A log axis cannot draw 0: an unmeasured (or zero) cell is a missing point (no bar).
                final boolean drawn = v.isPresent() && v.getAsDouble() > 0;
                values.add(drawn ? v.getAsDouble() : null);
                measured |= drawn;
                if (drawn)
                {
                    smallest = Math.min(smallest, v.getAsDouble());
                    largest = Math.max(largest, v.getAsDouble());
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
            return false;
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
        return true;
    }
}
