package io.sluice.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The soak's per-minute CSV as one SVG: a column of small panels sharing the minute axis, each with the series of
 * one unit (MiB, count, ms), every panel scaled from 0 to its largest value so a flat line reads as flat. A column
 * the CSV does not have (a soak from before the RSS split) is left out of its panel.
 */
final class SoakPlot {
    private record Panel(String title, String[] columns, String[] labels) {
    }

    private static final List<Panel> PANELS = List.of(
            new Panel("RSS (MiB)", new String[]{"broker_rss_mb", "ingest_rss_mb"}, new String[]{"broker", "sluice ingest"}),
            new Panel("broker RSS split (MiB)", new String[]{"broker_rss_mb", "broker_rss_anon_mb", "broker_rss_file_mb", "broker_journal_mapped_mb", "broker_rss_shmem_mb"},
                    new String[]{"RSS", "RssAnon", "RssFile", "of it journal", "RssShmem"}),
            new Panel("broker NMT committed (MiB)", new String[]{"broker_nmt_heap_mb", "broker_nmt_metaspace_mb", "broker_nmt_threads_mb", "broker_nmt_code_mb",
                    "broker_nmt_gc_mb", "broker_nmt_other_native_mb"}, new String[]{"Java heap", "metaspace", "threads", "code", "GC", "other native"}),
            new Panel("sluice ingest RSS split (MiB)", new String[]{"ingest_rss_mb", "ingest_rss_anon_mb", "ingest_rss_file_mb", "ingest_rss_shmem_mb"},
                    new String[]{"RSS", "RssAnon", "RssFile", "RssShmem"}),
            new Panel("sluice ingest NMT committed (MiB)", new String[]{"ingest_nmt_heap_mb", "ingest_nmt_metaspace_mb", "ingest_nmt_threads_mb", "ingest_nmt_code_mb",
                    "ingest_nmt_gc_mb", "ingest_nmt_other_native_mb"}, new String[]{"Java heap", "metaspace", "threads", "code", "GC", "other native"}),
            new Panel("heap after full GC (MiB)", new String[]{"broker_heap_after_gc_mb", "ingest_heap_after_gc_mb"}, new String[]{"broker", "sluice ingest"}),
            new Panel("direct / NMT Other (MiB)", new String[]{"broker_direct_mb", "ingest_direct_mb"}, new String[]{"broker", "sluice ingest"}),
            new Panel("threads", new String[]{"broker_threads", "ingest_threads"}, new String[]{"broker", "sluice ingest"}),
            new Panel("open file descriptors", new String[]{"broker_fds", "ingest_fds"}, new String[]{"broker", "sluice ingest"}),
            new Panel("produce latency (ms)", new String[]{"produce_p50_ms", "produce_p99_ms", "http_p99_ms"}, new String[]{"binary p50", "binary p99", "HTTP p99"}),
            new Panel("end-to-end latency (ms)", new String[]{"e2e_p50_ms", "e2e_p99_ms"}, new String[]{"p50", "p99"}));
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

    private SoakPlot() {
    }

    static String svg(List<String> csvLines, String title) {
        String[] header = csvLines.get(0).split(",", -1);
        List<String[]> rows = new ArrayList<>();
        for (String l : csvLines.subList(1, csvLines.size())) {
            rows.add(l.split(",", -1));
        }
        int w = 720;
        int ph = 120;
        int left = 60;
        int top = 40;
        int plotW = w - left - 170;
        StringBuilder sb = new StringBuilder();
        int h = top + PANELS.size() * (ph + 30) + 30;
        sb.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(w).append("\" height=\"").append(h)
                .append("\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        sb.append("<text x=\"").append(left).append("\" y=\"20\" font-size=\"14\">").append(escape(title)).append("</text>\n");
        int minutes = Math.max(1, rows.size());
        for (int pi = 0; pi < PANELS.size(); pi++) {
            Panel p = PANELS.get(pi);
            int y0 = top + pi * (ph + 30);
            double max = 0;
            for (String c : p.columns()) {
                int ci = index(header, c);
                if (ci < 0) {
                    continue;
                }
                for (String[] r : rows) {
                    max = Math.max(max, value(r, ci));
                }
            }
            max = max <= 0 ? 1 : max * 1.1;
            sb.append("<text x=\"").append(left).append("\" y=\"").append(y0 - 4).append("\">").append(escape(p.title())).append("</text>\n");
            sb.append("<rect x=\"").append(left).append("\" y=\"").append(y0).append("\" width=\"").append(plotW).append("\" height=\"").append(ph)
                    .append("\" fill=\"none\" stroke=\"#999\"/>\n");
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 4, y0 + 10, fmt(max)));
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", left - 4, y0 + ph));
            for (int s = 0; s < p.columns().length; s++) {
                int ci = index(header, p.columns()[s]);
                if (ci < 0) {
                    continue; // a CSV of an older soak, without this column
                }
                StringBuilder pts = new StringBuilder();
                for (int i = 0; i < rows.size(); i++) {
                    double v = value(rows.get(i), ci);
                    if (v < 0) {
                        continue;
                    }
                    double x = left + (minutes == 1 ? plotW / 2.0 : i * (double) plotW / (minutes - 1));
                    double y = y0 + ph - v / max * ph;
                    pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                }
                sb.append("<polyline fill=\"none\" stroke=\"").append(COLORS[s]).append("\" stroke-width=\"1.5\" points=\"")
                        .append(pts.toString().trim()).append("\"/>\n");
                sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", left + plotW + 8, y0 + 14 + s * 14,
                        COLORS[s], escape(p.labels()[s])));
            }
        }
        int yAxis = top + PANELS.size() * (ph + 30) - 14;
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">minute 1</text>\n", left, yAxis));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">minute %d</text>\n", left + plotW, yAxis, minutes));
        sb.append("</svg>\n");
        return sb.toString();
    }

    private static int index(String[] header, String column) {
        for (int i = 0; i < header.length; i++) {
            if (header[i].equals(column)) {
                return i;
            }
        }
        return -1;
    }

    private static double value(String[] row, int i) {
        if (i >= row.length || row[i].isEmpty()) {
            return -1;
        }
        try {
            return Double.parseDouble(row[i]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String fmt(double v) {
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;");
    }
}
