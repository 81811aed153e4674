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
    /** How many times each event id arrived; written by the consumer threads before their release of {@link #received}. */
    private final int[] deliveries;

    LatencyProbe(int maxEvents, int partitions) {
        this.intended = new long[maxEvents];
        this.histograms = new Histogram[partitions];
        for (int p = 0; p < partitions; p++) {
            histograms[p] = Latency.newHistogram();
        }
        this.received = new AtomicLongArray(partitions);
        this.deliveries = new int[maxEvents];
    }

    /** Called on partition {@code p}'s consumer thread. */
    void onEvent(int p, int id) {
        Latency.record(histograms[p], System.nanoTime() - intended[id]);
        deliveries[id]++;
        received.lazySet(p, received.get(p) + 1);
    }

    long received() {
        long sum = 0;
        for (int p = 0; p < received.length(); p++) {
            sum += received.get(p);
        }
        return sum;
    }

    /**
     * Checks that exactly {@code count} events arrived, each of ids 0 … count − 1 once: a duplicate standing in for a
     * lost event fails here, where a {@code received() >= count} test would pass it.
     */
    void verifyExactly(int count) {
        long got = received();
        if (got != count) {
            throw new IllegalStateException("received " + got + " events, sent " + count);
        }
        for (int id = 0; id < count; id++) {
            if (deliveries[id] != 1) {
                throw new IllegalStateException("event " + id + " arrived " + deliveries[id] + " times");
            }
        }
    }

    void reset() {
        java.util.Arrays.fill(deliveries, 0);
        for (int p = 0; p < histograms.length; p++) {
            histograms[p].reset();
            received.set(p, 0);
        }
    }

    Histogram merged() {
        return Latency.merge(histograms);
    }
}
