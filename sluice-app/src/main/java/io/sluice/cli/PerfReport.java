package io.sluice.cli;

import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.util.Locale;

/** The end of a perf run: a human summary, then one line of JSON for scripts (always printed, even after errors). */
final class PerfReport {
    private PerfReport() {
    }

    static void print(PrintStream out, String kind, long sent, long acknowledged, long errors, long bytes,
                      double seconds, Histogram latencyMicros, String firstError) {
        double throughput = seconds > 0 ? acknowledged / seconds : 0;
        double mbPerSecond = seconds > 0 ? bytes / seconds / 1e6 : 0;
        out.printf(Locale.ROOT, "%s: %d records %s, %d errors in %.2f s: %.0f records/s, %.1f MB/s%n", kind, acknowledged,
                kind.equals("perf-produce") ? "acknowledged of " + sent + " sent" : "received", errors, seconds, throughput, mbPerSecond);
        out.printf(Locale.ROOT, "latency us: p50 %d  p90 %d  p99 %d  p99.9 %d  max %d  (%d samples)%n",
                latencyMicros.getValueAtPercentile(50), latencyMicros.getValueAtPercentile(90),
                latencyMicros.getValueAtPercentile(99), latencyMicros.getValueAtPercentile(99.9),
                latencyMicros.getMaxValue(), latencyMicros.getTotalCount());
        out.printf(Locale.ROOT, "{\"tool\":\"%s\",\"records_sent\":%d,\"records_acknowledged\":%d,\"errors\":%d,"
                        + "\"seconds\":%.3f,\"records_per_second\":%.1f,\"mb_per_second\":%.2f,"
                        + "\"latency_us\":{\"p50\":%d,\"p90\":%d,\"p99\":%d,\"p999\":%d,\"max\":%d,\"samples\":%d},"
                        + "\"first_error\":%s}%n",
                kind, sent, acknowledged, errors, seconds, throughput, mbPerSecond,
                latencyMicros.getValueAtPercentile(50), latencyMicros.getValueAtPercentile(90),
                latencyMicros.getValueAtPercentile(99), latencyMicros.getValueAtPercentile(99.9),
                latencyMicros.getMaxValue(), latencyMicros.getTotalCount(), jsonString(firstError));
        out.flush();
    }

    private static String jsonString(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
