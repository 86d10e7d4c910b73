package dev.tokengap.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;

import javax.imageio.ImageIO;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYPointerAnnotation;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Draws a sweep with JFreeChart, headless, into one PNG: on the left p99 TTFT and the p99
 * across streams of per-stream p99 gap (y, two axes) against output throughput (x), the
 * knee marked; on the right token goodput and output throughput against the swept
 * parameter, the goodput peak marked.
 */
final class SweepChart {

	static final int WIDTH = 1600;

	static final int HEIGHT = 640;

	private SweepChart() {
	}

	static void draw(SweepSummary summary, Path file) throws IOException {
		if (System.getProperty("java.awt.headless") == null) {
			System.setProperty("java.awt.headless", "true");
		}
		BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
		Graphics2D g = image.createGraphics();
		try {
			g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
			latency(summary).draw(g, new Rectangle2D.Double(0, 0, WIDTH / 2.0, HEIGHT));
			goodput(summary).draw(g, new Rectangle2D.Double(WIDTH / 2.0, 0, WIDTH / 2.0, HEIGHT));
		}
		finally {
			g.dispose();
		}
		if (!ImageIO.write(image, "png", file.toFile())) {
			throw new IOException("no PNG writer");
		}
	}

	private static JFreeChart latency(SweepSummary summary) {
		XYSeries ttft = new XYSeries("p99 TTFT (ms)", false);
		XYSeries gap = new XYSeries("p99 across streams of per-stream p99 gap (ms)", false);
		for (SweepSummary.Point p : summary.points) {
			add(ttft, p.outputThroughput(), p.p99TtftMs());
			add(gap, p.outputThroughput(), p.p99StreamP99GapMs());
		}
		NumberAxis throughput = axis("output throughput (tok/s)");
		throughput.setLowerMargin(0.1);
		throughput.setUpperMargin(0.1);
		XYPlot plot = new XYPlot(new XYSeriesCollection(ttft), throughput, axis("p99 TTFT (ms)"),
				renderer(new Color(0x1f77b4)));
		plot.setDataset(1, new XYSeriesCollection(gap));
		plot.setRangeAxis(1, axis("p99 per-stream p99 gap (ms)"));
		plot.mapDatasetToRangeAxis(1, 1);
		plot.setRenderer(1, renderer(new Color(0xd62728)));
		for (int i = 0; i < summary.points.size(); i++) {
			SweepSummary.Point p = summary.points.get(i);
			// labels up and to the right, the last one's to the left, so none leaves the
			// plot
			double angle = (i == summary.points.size() - 1) ? -3 * Math.PI / 4 : -Math.PI / 4;
			label(plot, p.outputThroughput(), p.p99TtftMs(), summary.parameter + "=" + SweepSummary.value(p.value()),
					angle, (i == summary.points.size() - 1) ? TextAnchor.BOTTOM_RIGHT : TextAnchor.BOTTOM_LEFT);
		}
		SweepSummary.Point knee = summary.points.get(summary.knee);
		ValueMarker marker = new ValueMarker(knee.outputThroughput(), new Color(0x2ca02c), new BasicStroke(2f));
		marker.setLabel("knee: " + summary.parameter + "=" + SweepSummary.value(knee.value()));
		marker.setLabelAnchor(RectangleAnchor.TOP_LEFT);
		marker.setLabelTextAnchor(TextAnchor.TOP_RIGHT);
		plot.addDomainMarker(marker);
		return chart("Latency against output throughput", plot);
	}

	private static JFreeChart goodput(SweepSummary summary) {
		XYSeries goodput = new XYSeries("token goodput (tok/s)", false);
		XYSeries throughput = new XYSeries("output throughput (tok/s)", false);
		for (SweepSummary.Point p : summary.points) {
			add(goodput, p.value(), p.tokenGoodput());
			add(throughput, p.value(), p.outputThroughput());
		}
		XYSeriesCollection data = new XYSeriesCollection(goodput);
		data.addSeries(throughput);
		XYLineAndShapeRenderer renderer = renderer(new Color(0x9467bd));
		renderer.setSeriesPaint(1, Color.GRAY);
		renderer.setSeriesStroke(1,
				new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] { 6f, 4f }, 0f));
		XYPlot plot = new XYPlot(data, parameterAxis(summary), axis("tokens per second"), renderer);
		SweepSummary.Point peak = summary.points.get(summary.goodputPeak);
		label(plot, peak.value(), peak.tokenGoodput(),
				"goodput peak: " + summary.parameter + "=" + SweepSummary.value(peak.value()), 3 * Math.PI / 4,
				TextAnchor.TOP_RIGHT);
		SweepSummary.Point knee = summary.points.get(summary.knee);
		ValueMarker marker = new ValueMarker(knee.value(), new Color(0x2ca02c), new BasicStroke(2f));
		marker.setLabel("knee");
		marker.setLabelAnchor(RectangleAnchor.TOP_LEFT);
		marker.setLabelTextAnchor(TextAnchor.TOP_RIGHT);
		plot.addDomainMarker(marker);
		return chart("Goodput against " + summary.parameter.replace('_', ' '), plot);
	}

	private static void add(XYSeries series, double x, double y) {
		if (Double.isFinite(x) && Double.isFinite(y)) {
			series.add(x, y);
		}
	}

	private static void label(XYPlot plot, double x, double y, String text, double angle, TextAnchor anchor) {
		if (Double.isFinite(x) && Double.isFinite(y)) {
			XYPointerAnnotation annotation = new XYPointerAnnotation(text, x, y, angle);
			annotation.setTextAnchor(anchor);
			plot.addAnnotation(annotation);
		}
	}

	private static NumberAxis axis(String label) {
		NumberAxis axis = new NumberAxis(label);
		axis.setAutoRangeIncludesZero(true);
		axis.setUpperMargin(0.12);
		return axis;
	}

	/** Logarithmic when the swept values span a factor of 8 or more (1, 4, 16, 64). */
	private static ValueAxis parameterAxis(SweepSummary summary) {
		String label = summary.parameter.replace('_', ' ');
		double min = summary.points.stream().mapToDouble(SweepSummary.Point::value).min().orElse(1);
		double max = summary.points.stream().mapToDouble(SweepSummary.Point::value).max().orElse(1);
		if (max / min < 8) {
			return axis(label);
		}
		LogAxis axis = new LogAxis(label + " (log scale)");
		axis.setBase(2);
		axis.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
		axis.setLowerMargin(0.08);
		axis.setUpperMargin(0.08);
		return axis;
	}

	private static XYLineAndShapeRenderer renderer(Color color) {
		XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
		renderer.setSeriesPaint(0, color);
		renderer.setSeriesStroke(0, new BasicStroke(2f));
		return renderer;
	}

	private static JFreeChart chart(String title, XYPlot plot) {
		JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
		chart.setBackgroundPaint(Color.WHITE);
		plot.setBackgroundPaint(new Color(0xf7f7f7));
		return chart;
	}

}
