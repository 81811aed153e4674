package io.sluice.bench.report;

import java.util.Locale;

/** Number formatting shared by the console tables, the Markdown report and the charts. */
public final class Numbers {
    private Numbers() {
    }

    /** Three significant-ish digits, thousands separated: 0.42, 7.46, 54.6, 138,764. */
    public static String format(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /** Plain machine-readable form for JSON (no separators). */
    public static String json(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "null";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return String.format(Locale.ROOT, "%.4f", v);
    }
}
