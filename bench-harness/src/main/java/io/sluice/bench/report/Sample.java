package io.sluice.bench.report;

import java.util.Arrays;
import java.util.List;

/**
 * One figure measured over several iterations: never reported as a single run, always as the median and the
 * spread (min–max) of the iterations.
 */
public final class Sample {
    private final double[] sorted;

    private Sample(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("a sample needs at least one value");
        }
        this.sorted = values.clone();
        Arrays.sort(sorted);
    }

    public static Sample of(double... values) {
        return new Sample(values);
    }

    public static Sample of(List<? extends Number> values) {
        return new Sample(values.stream().mapToDouble(Number::doubleValue).toArray());
    }

    public double median() {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }

    public double min() {
        return sorted[0];
    }

    public double max() {
        return sorted[sorted.length - 1];
    }

    public int count() {
        return sorted.length;
    }

    /** e.g. {@code 12.3 [11.9–14.0]}. */
    public String describe() {
        if (count() == 1) {
            return Numbers.format(median()) + " (1 run)";
        }
        return Numbers.format(median()) + " [" + Numbers.format(min()) + "–" + Numbers.format(max()) + "]";
    }
}
