package io.sluice.bench.report.chart;

import io.sluice.bench.report.Numbers;

import java.util.ArrayList;
import java.util.List;

/**
 * Grouped horizontal bars: one group per category (e.g. "1 thread"), one bar per series (Sluice, the raw baseline,
 * the reference report). Missing values are left out of their group and say "n/a".
 */
public final class BarChart implements Chart {
    private static final int WIDTH = 900;
    private static final double LEFT = 190;
    private static final double RIGHT = 140;
    private static final double TOP = 60;
    private static final double BAR = 16;
    private static final double GAP = 14;

    private final String fileName;
    private final String title;
    private final String unit;
    private final List<String> seriesNames;
    private final List<String> categories = new ArrayList<>();
    private final List<Double[]> values = new ArrayList<>();

    public BarChart(String fileName, String title, String unit, List<String> seriesNames) {
        this.fileName = fileName;
        this.title = title;
        this.unit = unit;
        this.seriesNames = List.copyOf(seriesNames);
    }

    /** One category; {@code perSeries} in the order of the series names, null where not measured. */
    public BarChart category(String name, Double... perSeries) {
        if (perSeries.length != seriesNames.size()) {
            throw new IllegalArgumentException("expected " + seriesNames.size() + " values, got " + perSeries.length);
        }
        categories.add(name);
        values.add(perSeries.clone());
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
        int n = seriesNames.size();
        double groupH = n * BAR + GAP;
        int height = (int) (TOP + categories.size() * groupH + 60);
        Svg svg = new Svg(WIDTH, height);
        double plotW = WIDTH - LEFT - RIGHT;
        double max = 0;
        for (Double[] vs : values) {
            for (Double v : vs) {
                if (v != null) {
                    max = Math.max(max, v);
                }
            }
        }
        double[] axis = Svg.niceAxis(max, 5);
        double xMax = axis[0];
        svg.text(WIDTH / 2.0, 22, title, "middle", 15, true);
        // legend
        double lx = LEFT;
        for (int s = 0; s < n; s++) {
            svg.rect(lx, 34, 12, 12, Svg.PALETTE[s % Svg.PALETTE.length], null);
            svg.text(lx + 16, 44, seriesNames.get(s), "start", 11, false);
            lx += 22 + 7 * seriesNames.get(s).length();
        }
        double plotBottom = TOP + categories.size() * groupH;
        for (double v = 0; v <= xMax + axis[1] / 2; v += axis[1]) {
            double x = LEFT + plotW * v / xMax;
            svg.line(x, TOP - 4, x, plotBottom, "#e5e5e5", 1, null);
            svg.text(x, plotBottom + 16, Numbers.format(v), "middle", 10, false);
        }
        svg.text(LEFT + plotW / 2, plotBottom + 36, unit, "middle", 12, false);
        for (int c = 0; c < categories.size(); c++) {
            double y0 = TOP + c * groupH;
            svg.text(LEFT - 8, y0 + n * BAR / 2 + 4, categories.get(c), "end", 11, false);
            for (int s = 0; s < n; s++) {
                Double v = values.get(c)[s];
                double y = y0 + s * BAR;
                String colour = Svg.PALETTE[s % Svg.PALETTE.length];
                if (v == null) {
                    svg.text(LEFT + 4, y + BAR - 4, "n/a", "start", 10, false);
                    continue;
                }
                double w = Math.max(1, plotW * v / xMax);
                svg.rect(LEFT, y + 1, w, BAR - 2, colour, seriesNames.get(s) + ": " + Numbers.format(v) + " " + unit);
                svg.text(LEFT + w + 4, y + BAR - 4, Numbers.format(v), "start", 10, false);
            }
        }
        svg.line(LEFT, TOP - 4, LEFT, plotBottom, "#333333", 1, null);
        return svg.finish();
    }
}
