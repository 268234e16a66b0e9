package io.nvmeof.cli;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.geom.Rectangle2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;

/**
 * IOPS and latency percentiles over a run as an SVG (JFreeChart draws, JFreeSVG writes): IOPS
 * of reads and writes above, their median, 99th and 99.9th percentile latency below (µs, log
 * scale), both against seconds into the run.
 */
final class BenchPlot {
    private BenchPlot() {
    }

    static void svg(Path out, String title, List<BenchLog.Window> windows) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYSeriesCollection iops = new XYSeriesCollection();
        XYSeriesCollection lat = new XYSeriesCollection();
        for (boolean write : new boolean[] {false, true}) {
            String d = write ? "write" : "read";
            XYSeries io = new XYSeries(d + " IOPS");
            XYSeries p50 = new XYSeries(d + " p50");
            XYSeries p99 = new XYSeries(d + " p99");
            XYSeries p999 = new XYSeries(d + " p99.9");
            for (BenchLog.Window w : windows) {
                if (w.write() != write) {
                    continue;
                }
                double t = w.endMillis() / 1000.0;
                io.add(t, w.iops());
                if (w.p50() > 0) { // a window of an IOPS log alone has no latencies
                    p50.add(t, w.p50() / 1000.0);
                    p99.add(t, w.p99() / 1000.0);
                    p999.add(t, w.p999() / 1000.0);
                }
            }
            if (!io.isEmpty()) {
                iops.addSeries(io);
            }
            if (!p50.isEmpty()) {
                lat.addSeries(p50);
                lat.addSeries(p99);
                lat.addSeries(p999);
            }
        }
        if (iops.getSeriesCount() == 0) {
            throw new IOException("nothing to plot: no I/O was measured");
        }
        NumberAxis time = new NumberAxis("seconds");
        NumberAxis iopsAxis = new NumberAxis("IOPS");
        iopsAxis.setAutoRangeIncludesZero(true);
        XYPlot top = new XYPlot(iops, null, iopsAxis, renderer(iops.getSeriesCount()));
        LogAxis latAxis = new LogAxis("latency (µs)");
        latAxis.setSmallestValue(0.001);
        latAxis.setTickUnit(new NumberTickUnit(1)); // a tick per decade, labelled 10, 100, 1,000 µs
        latAxis.setNumberFormatOverride(new DecimalFormat("#,##0.###"));
        XYPlot bottom = new XYPlot(lat, null, latAxis, renderer(lat.getSeriesCount()));
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(time);
        plot.setGap(12);
        plot.add(top, 1);
        plot.add(bottom, 1);
        for (XYPlot p : new XYPlot[] {top, bottom}) {
            p.setBackgroundPaint(Color.WHITE);
            p.setDomainGridlinePaint(Color.LIGHT_GRAY);
            p.setRangeGridlinePaint(Color.LIGHT_GRAY);
        }
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        SVGGraphics2D g = new SVGGraphics2D(960, 640);
        chart.draw(g, new Rectangle2D.Double(0, 0, 960, 640));
        Files.writeString(out, g.getSVGDocument());
    }

    private static XYLineAndShapeRenderer renderer(int series) {
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < series; i++) {
            r.setSeriesStroke(i, new BasicStroke(1.5f));
        }
        return r;
    }
}
