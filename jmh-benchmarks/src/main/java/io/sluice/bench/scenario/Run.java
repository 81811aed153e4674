package io.sluice.bench.scenario;

import io.sluice.bench.internal.Latency;
import org.HdrHistogram.Histogram;

/**
 * One measured run: {@code count} operations in {@code nanos}, with an optional per-operation latency histogram.
 */
record Run(long count, long nanos, Histogram latency) {

    static Run of(long count, long nanos) {
        return new Run(count, nanos, null);
    }

    double perSecond() {
        return count * 1e9 / Math.max(1, nanos);
    }

    /** MiB/s of payload for operations of {@code bytes} each (the reference's "MB/s" are MiB/s: 138,764 × 1 KiB = 135.5). */
    double mebibytesPerSecond(int bytes) {
        return perSecond() * bytes / (1024.0 * 1024.0);
    }

    double latencyMicros(int metric) {
        return LatencyRows.value(latency, metric) / 1_000.0;
    }

    static Histogram histogram() {
        return Latency.newHistogram();
    }
}
