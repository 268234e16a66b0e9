package io.nvmeof.tools;

import java.awt.Color;
import java.awt.Dimension;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.apache.batik.svggen.SVGGraphics2D;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

/**
 * IOPS and latency percentiles over a run as an SVG: XChart draws, Apache Batik's SVG
 * generator writes (both Apache-licensed). IOPS of reads and writes above; their median, 99th
 * and 99.9th percentile latency below (µs, log scale); both against seconds into the run.
 */
public final class BenchPlot {
    private static final String SVG = "http://www.w3.org/2000/svg";
    static final int WIDTH = 960;
    static final int HEIGHT = 320;

    private BenchPlot() {
    }

    public static void svg(Path out, String title, List<BenchLog.Window> windows) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart iops = chart(title, "IOPS", false);
        XYChart latency = chart("latency percentiles", "latency (µs)", true);
        boolean any = false;
        for (boolean write : new boolean[] {false, true}) {
            String d = write ? "write" : "read";
            List<Double> t = new ArrayList<>();
            List<Double> io = new ArrayList<>();
            List<Double> lt = new ArrayList<>();
            List<List<Double>> p = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
            for (BenchLog.Window w : windows) {
                if (w.write() != write) {
                    continue;
                }
                double s = w.endMillis() / 1000.0;
                t.add(s);
                io.add(w.iops());
                if (w.p50() > 0) { // a window of an IOPS log alone has no latencies
                    lt.add(s);
                    p.get(0).add(w.p50() / 1000.0);
                    p.get(1).add(w.p99() / 1000.0);
                    p.get(2).add(w.p999() / 1000.0);
                }
            }
            if (!t.isEmpty()) {
                iops.addSeries(d + " IOPS", t, io).setMarker(SeriesMarkers.NONE);
                any = true;
            }
            if (!lt.isEmpty()) {
                String[] names = {" p50", " p99", " p99.9"};
                for (int i = 0; i < 3; i++) {
                    latency.addSeries(d + names[i], lt, p.get(i)).setMarker(SeriesMarkers.NONE);
                }
            }
        }
        if (!any) {
            throw new IOException("nothing to plot: no I/O was measured");
        }
        Document doc;
        try {
            doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().getDOMImplementation()
                    .createDocument(SVG, "svg", null);
        } catch (ParserConfigurationException e) {
            throw new IOException("no XML DOM to draw into: " + e.getMessage(), e);
        }
        SVGGraphics2D g = new SVGGraphics2D(doc);
        g.setSVGCanvasSize(new Dimension(WIDTH, latency.getSeriesMap().isEmpty() ? HEIGHT : 2 * HEIGHT));
        iops.paint(g, WIDTH, HEIGHT);
        if (!latency.getSeriesMap().isEmpty()) {
            g.translate(0, HEIGHT);
            latency.paint(g, WIDTH, HEIGHT);
        }
        // the charts' text is drawn as shapes; a title and description say in text what is drawn
        Element root = g.getRoot();
        Element desc = doc.createElementNS(SVG, "desc");
        desc.setTextContent("IOPS and latency percentiles over time, series: " + String.join(", ", series(iops, latency)));
        root.insertBefore(desc, root.getFirstChild());
        Element name = doc.createElementNS(SVG, "title");
        name.setTextContent(title);
        root.insertBefore(name, root.getFirstChild());
        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            g.stream(root, w, true, false);
        }
    }

    private static List<String> series(XYChart... charts) {
        List<String> names = new ArrayList<>();
        for (XYChart c : charts) {
            names.addAll(c.getSeriesMap().keySet());
        }
        return names;
    }

    private static XYChart chart(String title, String yTitle, boolean log) {
        XYChart c = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle("seconds")
                .yAxisTitle(yTitle).build();
        c.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        c.getStyler().setChartBackgroundColor(Color.WHITE);
        c.getStyler().setPlotBackgroundColor(Color.WHITE);
        c.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        if (log) {
            c.getStyler().setYAxisLogarithmic(true);
            c.getStyler().setYAxisDecimalPattern("#,##0.#");
        }
        return c;
    }
}
