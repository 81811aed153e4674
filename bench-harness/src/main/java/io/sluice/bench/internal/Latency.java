package io.sluice.bench.internal;

import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;

/** Latency histograms: nanosecond values up to one minute, three significant digits. */
public final class Latency {
    /** The percentiles the reports print, in order. */
    public static final double[] PERCENTILES = {50, 90, 95, 99, 99.9};

    private Latency() {
    }

    public static Histogram newHistogram() {
        return new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    }

    /** Records a latency, clamping negatives (clock granularity) to zero and giant values to the histogram's top. */
    public static void record(Histogram h, long nanos) {
        long v = nanos < 0 ? 0 : Math.min(nanos, h.getHighestTrackableValue());
        h.recordValue(v);
    }

    /** Sum of several histograms (a new one). */
    public static Histogram merge(Histogram... parts) {
        Histogram all = newHistogram();
        for (Histogram h : parts) {
            if (h != null) {
                all.add(h);
            }
        }
        return all;
    }

    public static double micros(double nanos) {
        return nanos / 1_000.0;
    }

    public static double millis(double nanos) {
        return nanos / 1_000_000.0;
    }

    public static String percentileLabel(double p) {
        return p == Math.rint(p) ? "P" + (int) p : "P" + p;
    }
}
