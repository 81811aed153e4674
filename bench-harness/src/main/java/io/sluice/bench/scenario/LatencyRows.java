package io.sluice.bench.scenario;

import io.sluice.bench.internal.Latency;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Sample;
import io.sluice.bench.report.Table;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Turns per-iteration latency histograms into the reports' rows: Min, Avg, P50, P90, P95, P99, P99.9, Max, each the
 * median over iterations with its spread.
 */
final class LatencyRows {
    /** Row names in the order of the reference arrays passed to {@link #add}. */
    static final String[] METRICS = {"Min", "Avg", "P50", "P90", "P95", "P99", "P99.9", "Max"};

    private LatencyRows() {
    }

    /**
     * @param reference   reference figures in {@link #METRICS} order (already in {@code unit}), or null
     * @param nanosPerUnit 1_000 for µs, 1_000_000 for ms
     */
    static void add(Table.Builder table, List<Histogram> sluice, List<Histogram> baseline, double[] reference,
                    String unit, double nanosPerUnit, String note) {
        add(table, "", sluice, baseline, reference, null, unit, nanosPerUnit, note);
    }

    /**
     * @param prefix     put before each metric name (e.g. "memory-only ")
     * @param notComparable null, or why Sluice's rows measure another quantity than the reference (rows say "not
     *                      comparable: why" and count in no total)
     */
    static void add(Table.Builder table, String prefix, List<Histogram> sluice, List<Histogram> baseline, double[] reference,
                    String notComparable, String unit, double nanosPerUnit, String note) {
        add(table, prefix, sluice, baseline, reference, notComparable, unit, nanosPerUnit, note, java.util.Map.of());
    }

    /** As above, with goals on some rows: {@link #METRICS} index → that row's goals. */
    static void add(Table.Builder table, String prefix, List<Histogram> sluice, List<Histogram> baseline, double[] reference,
                    String notComparable, String unit, double nanosPerUnit, String note,
                    java.util.Map<Integer, List<io.sluice.bench.report.Goal>> goals) {
        for (int m = 0; m < METRICS.length; m++) {
            int metric = m;
            ToDoubleFunction<Histogram> f = h -> value(h, metric) / nanosPerUnit;
            Row row = new Row(prefix + METRICS[m], unit, Better.LOWER, sample(sluice, f), sample(baseline, f),
                    reference == null ? null : reference[m], m == 0 ? note : null);
            if (notComparable != null) {
                row = row.notComparable(notComparable);
            }
            for (io.sluice.bench.report.Goal g : goals.getOrDefault(m, List.of())) {
                row = row.withGoal(g);
            }
            table.row(row);
        }
    }

    static double value(Histogram h, int metric) {
        return switch (metric) {
            case 0 -> h.getMinValue();
            case 1 -> h.getMean();
            case 2 -> h.getValueAtPercentile(50);
            case 3 -> h.getValueAtPercentile(90);
            case 4 -> h.getValueAtPercentile(95);
            case 5 -> h.getValueAtPercentile(99);
            case 6 -> h.getValueAtPercentile(99.9);
            case 7 -> h.getMaxValue();
            default -> throw new IllegalArgumentException("metric " + metric);
        };
    }

    static Sample sample(List<Histogram> runs, ToDoubleFunction<Histogram> f) {
        if (runs == null || runs.isEmpty()) {
            return null;
        }
        List<Double> values = new ArrayList<>();
        for (Histogram h : runs) {
            values.add(f.applyAsDouble(h));
        }
        return Sample.of(values);
    }

    static Histogram merged(List<Histogram> runs) {
        return runs == null ? null : Latency.merge(runs.toArray(new Histogram[0]));
    }
}
