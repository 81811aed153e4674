package io.sluice.bench.scenario;

import io.sluice.bench.internal.Latency;
import org.HdrHistogram.Histogram;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Records, on the consumer side, each event's latency from its intended send time, which the publisher writes into
 * {@link #intended} before it publishes event {@code id} (the publish is the happens-before edge). One histogram and
 * one counter per partition: each partition is consumed by one thread, so every histogram has a single writer.
 * {@link #reset()} and {@link #merged()} are called by the harness only while the bus is quiet.
 */
final class LatencyProbe {
    final long[] intended;
    private final Histogram[] histograms;
    private final AtomicLongArray received;

    LatencyProbe(int maxEvents, int partitions) {
        this.intended = new long[maxEvents];
        this.histograms = new Histogram[partitions];
        for (int p = 0; p < partitions; p++) {
            histograms[p] = Latency.newHistogram();
        }
        this.received = new AtomicLongArray(partitions);
    }

    /** Called on partition {@code p}'s consumer thread. */
    void onEvent(int p, int id) {
        Latency.record(histograms[p], System.nanoTime() - intended[id]);
        received.lazySet(p, received.get(p) + 1);
    }

    long received() {
        long sum = 0;
        for (int p = 0; p < received.length(); p++) {
            sum += received.get(p);
        }
        return sum;
    }

    void reset() {
        for (int p = 0; p < histograms.length; p++) {
            histograms[p].reset();
            received.set(p, 0);
        }
    }

    Histogram merged() {
        return Latency.merge(histograms);
    }
}
