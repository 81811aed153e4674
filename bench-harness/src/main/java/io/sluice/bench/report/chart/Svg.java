package io.sluice.bench.report.chart;

import java.util.Locale;

/**
 * A tiny SVG writer: just the elements the charts need, with attribute and text escaping. No dependency, the output is
 * plain SVG 1.1 that browsers, GitHub and image viewers render.
 */
final class Svg {
    /** Colour-blind-friendly palette (Okabe–Ito), cycled per series. */
    static final String[] PALETTE = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"};

    private final StringBuilder out = new StringBuilder(16 * 1024);

    Svg(int width, int height) {
        out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
                .append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(width).append("\" height=\"").append(height)
                .append("\" viewBox=\"0 0 ").append(width).append(' ').append(height)
                .append("\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n")
                .append("<rect x=\"0\" y=\"0\" width=\"").append(width).append("\" height=\"").append(height).append("\" fill=\"#ffffff\"/>\n");
    }

    Svg line(double x1, double y1, double x2, double y2, String stroke, double width, String dash) {
        out.append("<line x1=\"").append(n(x1)).append("\" y1=\"").append(n(y1)).append("\" x2=\"").append(n(x2))
                .append("\" y2=\"").append(n(y2)).append("\" stroke=\"").append(stroke).append("\" stroke-width=\"").append(n(width)).append('"');
        if (dash != null) {
            out.append(" stroke-dasharray=\"").append(dash).append('"');
        }
        out.append("/>\n");
        return this;
    }

    Svg polyline(double[] xs, double[] ys, String stroke, double width, String dash) {
        out.append("<polyline fill=\"none\" stroke=\"").append(stroke).append("\" stroke-width=\"").append(n(width)).append('"');
        if (dash != null) {
            out.append(" stroke-dasharray=\"").append(dash).append('"');
        }
        out.append(" points=\"");
        for (int i = 0; i < xs.length; i++) {
            out.append(n(xs[i])).append(',').append(n(ys[i])).append(' ');
        }
        out.append("\"/>\n");
        return this;
    }

    Svg circle(double cx, double cy, double r, String fill) {
        out.append("<circle cx=\"").append(n(cx)).append("\" cy=\"").append(n(cy)).append("\" r=\"").append(n(r))
                .append("\" fill=\"").append(fill).append("\"/>\n");
        return this;
    }

    Svg rect(double x, double y, double w, double h, String fill, String tooltip) {
        out.append("<rect x=\"").append(n(x)).append("\" y=\"").append(n(y)).append("\" width=\"").append(n(w))
                .append("\" height=\"").append(n(h)).append("\" fill=\"").append(fill).append('"');
        if (tooltip == null) {
            out.append("/>\n");
        } else {
            out.append("><title>").append(escape(tooltip)).append("</title></rect>\n");
        }
        return this;
    }

    /** anchor: start, middle or end. */
    Svg text(double x, double y, String text, String anchor, int size, boolean bold) {
        out.append("<text x=\"").append(n(x)).append("\" y=\"").append(n(y)).append("\" text-anchor=\"").append(anchor)
                .append("\" font-size=\"").append(size).append('"');
        if (bold) {
            out.append(" font-weight=\"bold\"");
        }
        out.append('>').append(escape(text)).append("</text>\n");
        return this;
    }

    Svg verticalText(double x, double y, String text, int size) {
        out.append("<text x=\"").append(n(x)).append("\" y=\"").append(n(y)).append("\" text-anchor=\"middle\" font-size=\"")
                .append(size).append("\" transform=\"rotate(-90 ").append(n(x)).append(' ').append(n(y)).append(")\">")
                .append(escape(text)).append("</text>\n");
        return this;
    }

    String finish() {
        return out.append("</svg>\n").toString();
    }

    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    private static String n(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    /** A "nice" axis maximum and step (1, 2, 2.5 or 5 × 10^k) covering {@code max} in about {@code ticks} steps. */
    static double[] niceAxis(double max, int ticks) {
        if (!(max > 0)) {
            return new double[]{1, 0.25};
        }
        double rough = max / ticks;
        double mag = Math.pow(10, Math.floor(Math.log10(rough)));
        double step = mag;
        for (double m : new double[]{1, 2, 2.5, 5, 10}) {
            if (m * mag >= rough) {
                step = m * mag;
                break;
            }
        }
        return new double[]{Math.ceil(max / step) * step, step};
    }
}
