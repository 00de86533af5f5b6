package org.inagg.control.cli;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** PNG charts with XChart (headless). */
final class Charts {

    private Charts() {
    }

    static void bars(Path file, String title, String yTitle, Map<String, Double> values) {
        CategoryChart chart = new CategoryChartBuilder().width(900).height(500).title(title).yAxisTitle(yTitle)
            .build();
        chart.getStyler().setLegendVisible(false);
        chart.addSeries(title, List.copyOf(values.keySet()), List.copyOf(values.values()));
        save(chart, file);
    }

    static void lines(Path file, String title, String xTitle, String yTitle, double[] x,
                      Map<String, double[]> series) {
        XYChart chart = new XYChartBuilder().width(900).height(500).title(title).xAxisTitle(xTitle)
            .yAxisTitle(yTitle).build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        for (var entry : series.entrySet()) {
            chart.addSeries(entry.getKey(), x, entry.getValue());
        }
        save(chart, file);
    }

    private static void save(Object chart, Path file) {
        try {
            if (chart instanceof CategoryChart category) {
                BitmapEncoder.saveBitmap(category, file.toString(), BitmapEncoder.BitmapFormat.PNG);
            } else {
                BitmapEncoder.saveBitmap((XYChart) chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write chart " + file, e);
        }
    }
}
