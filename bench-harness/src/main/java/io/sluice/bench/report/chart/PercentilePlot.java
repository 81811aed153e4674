package io.sluice.bench.report.chart;

import io.sluice.bench.report.Numbers;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An HdrHistogram percentile-distribution plot: latency against percentile (x, log scale of {@code 1/(1-p)}, so
 * 90, 99, 99.9 and 99.99 are evenly spaced), one line per configuration. The latency axis is logarithmic too
 * (decades), so that microsecond medians and millisecond tails stay readable on one picture. Reference figures,
 * which are only known at a few percentiles, are drawn as dashed lines through dots.
 */
public final class PercentilePlot implements Chart {
    private static final int WIDTH = 900;
    private static final int HEIGHT = 480;
    private static final double LEFT = 80;
    private static final double RIGHT = 250;
    private static final double TOP = 45;
    private static final double BOTTOM = 60;
    /** The x axis spans 0 to 99.99%: four decades of 1/(1-p). */
    private static final double DECADES = 4;

    private final String fileName;
    private final String title;
    private final String unit;
    private final double unitNanos;
    private final List<Series> series = new ArrayList<>();

    private record Series(String name, double[] decades, double[] values, boolean reference) {
    }

    /**
     * @param unit      y axis unit label, e.g. "µs"
     * @param unitNanos nanoseconds per unit, e.g. 1000 for µs
     */
    public PercentilePlot(String fileName, String title, String unit, double unitNanos) {
        this.fileName = fileName;
        this.title = title;
        this.unit = unit;
        this.unitNanos = unitNanos;
    }

    /** Adds a measured distribution (nanosecond histogram). */
    public PercentilePlot histogram(String name, Histogram h) {
        if (h == null || h.getTotalCount() == 0) {
            return this;
        }
        int steps = 160;
        double[] xs = new double[steps + 1];
        double[] ys = new double[steps + 1];
        for (int i = 0; i <= steps; i++) {
            double d = DECADES * i / steps;
            double percentile = 100.0 * (1.0 - Math.pow(10, -d));
            xs[i] = d;
            ys[i] = h.getValueAtPercentile(percentile) / unitNanos;
        }
        series.add(new Series(name, xs, ys, false));
        return this;
    }

    /** Adds reference points: percentile (e.g. 99.9) → value in {@link #unit}. */
    public PercentilePlot referencePoints(String name, Map<Double, Double> percentileToValue) {
        double[] xs = new double[percentileToValue.size()];
        double[] ys = new double[percentileToValue.size()];
        int i = 0;
        for (Map.Entry<Double, Double> e : percentileToValue.entrySet()) {
            xs[i] = Math.min(DECADES, -Math.log10(1.0 - e.getKey() / 100.0));
            ys[i] = e.getValue();
            i++;
        }
        series.add(new Series(name, xs, ys, true));
        return this;
    }

    @Override
    public String fileName() {
        return fileName;
    }

    @Override
    public String title() {
        return title;
    }

    @Override
    public String toSvg() {
        Svg svg = new Svg(WIDTH, HEIGHT);
        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;
        double max = 0;
        double min = Double.MAX_VALUE;
        for (Series s : series) {
            for (double v : s.values) {
                max = Math.max(max, v);
                if (v > 0) {
                    min = Math.min(min, v);
                }
            }
        }
        if (max <= 0) {
            max = 1;
        }
        if (min == Double.MAX_VALUE || min >= max) {
            min = max / 10;
        }
        int lowDecade = (int) Math.floor(Math.log10(min));
        int highDecade = Math.max(lowDecade + 1, (int) Math.ceil(Math.log10(max)));
        double span = highDecade - lowDecade;
        svg.text(WIDTH / 2.0, 24, title, "middle", 15, true);
        for (int d = lowDecade; d <= highDecade; d++) {
            double y = TOP + plotH - plotH * (d - lowDecade) / span;
            svg.line(LEFT, y, LEFT + plotW, y, "#dddddd", 1, null);
            svg.text(LEFT - 8, y + 4, Numbers.format(Math.pow(10, d)), "end", 11, false);
            for (int k = 2; k < 10 && d < highDecade; k++) {
                double yk = TOP + plotH - plotH * (d + Math.log10(k) - lowDecade) / span;
                svg.line(LEFT, yk, LEFT + 4, yk, "#999999", 1, null);
            }
        }
        String[] labels = {"0%", "90%", "99%", "99.9%", "99.99%"};
        for (int d = 0; d <= DECADES; d++) {
            double x = LEFT + plotW * d / DECADES;
            svg.line(x, TOP, x, TOP + plotH, "#dddddd", 1, null);
            svg.text(x, TOP + plotH + 18, labels[d], "middle", 11, false);
        }
        svg.line(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH, "#333333", 1, null);
        svg.line(LEFT, TOP, LEFT, TOP + plotH, "#333333", 1, null);
        svg.text(LEFT + plotW / 2, HEIGHT - 18, "percentile (log scale)", "middle", 12, false);
        svg.verticalText(22, TOP + plotH / 2, "latency (" + unit + ", log scale)", 12);
        double bottom = Math.pow(10, lowDecade);

        int colour = 0;
        double legendY = TOP + 10;
        for (Series s : series) {
            String c = Svg.PALETTE[colour++ % Svg.PALETTE.length];
            double[] px = new double[s.decades.length];
            double[] py = new double[s.values.length];
            for (int i = 0; i < px.length; i++) {
                px[i] = LEFT + plotW * s.decades[i] / DECADES;
                double v = Math.max(s.values[i], bottom);
                py[i] = TOP + plotH - plotH * (Math.log10(v) - lowDecade) / span;
            }
            svg.polyline(px, py, c, s.reference ? 1.5 : 2, s.reference ? "6,4" : null);
            if (s.reference) {
                for (int i = 0; i < px.length; i++) {
                    svg.circle(px[i], py[i], 3.5, c);
                }
            }
            double lx = LEFT + plotW + 18;
            svg.line(lx, legendY - 4, lx + 24, legendY - 4, c, 2.5, s.reference ? "6,4" : null);
            svg.text(lx + 30, legendY, s.name, "start", 11, false);
            legendY += 18;
        }
        return svg.finish();
    }
}
