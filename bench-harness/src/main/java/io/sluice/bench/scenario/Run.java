package io.sluice.bench.scenario;

import io.sluice.bench.internal.CpuTime;
import io.sluice.bench.internal.Latency;
import org.HdrHistogram.Histogram;

/**
 * One measured run: {@code count} operations in {@code nanos}, with an optional per-operation latency histogram and
 * the CPU time (user + system) the whole benchmark JVM used during the run ({@link Repeat} fills it in; NaN when
 * not measured).
 */
record Run(long count, long nanos, Histogram latency, double cpuSeconds) {

    Run(long count, long nanos, Histogram latency) {
        this(count, nanos, latency, Double.NaN);
    }

    static Run of(long count, long nanos) {
        return new Run(count, nanos, null);
    }

    /** This run with the process CPU seconds measured around it. */
    Run withCpu(double seconds) {
        return new Run(count, nanos, latency, seconds);
    }

    double perSecond() {
        return count * 1e9 / Math.max(1, nanos);
    }

    /** CPU seconds (user + system, whole JVM) per million operations of this run; NaN when not measured. */
    double cpuPerMillion() {
        return Double.isNaN(cpuSeconds) ? Double.NaN : CpuTime.perMillion(cpuSeconds, count);
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
