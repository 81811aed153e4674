package io.sluice.bench.scenario.redis;

import io.sluice.bench.internal.Latency;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one run received: each envelope's publish→receive latency (from its actual send time, as the reference
 * measured it), distinct and duplicate counts, and the time of the last receive. One histogram per receiving thread.
 */
final class Tally {
    private final long[] sentAt;
    private final AtomicIntegerArray seen;
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final List<Histogram> histograms = new ArrayList<>();
    private volatile long lastReceiveNanos;

    Tally(int count) {
        this.sentAt = new long[count];
        this.seen = new AtomicIntegerArray(count);
    }

    void sent(int sequence, long nanos) {
        sentAt[sequence] = nanos;
    }

    synchronized Histogram newHistogram() {
        Histogram h = Latency.newHistogram();
        histograms.add(h);
        return h;
    }

    /** Called by a receiving thread for each envelope, with its own histogram. */
    void received(byte[] envelope, long now, Histogram h) {
        int seq = Envelope.sequence(envelope);
        if (seq < 0 || seq >= seen.length() || seen.getAndSet(seq, 1) != 0) {
            duplicates.incrementAndGet();
            return;
        }
        Latency.record(h, now - sentAt[seq]);
        received.incrementAndGet();
        lastReceiveNanos = now;
    }

    long received() {
        return received.get();
    }

    long duplicates() {
        return duplicates.get();
    }

    long lastReceiveNanos() {
        return lastReceiveNanos;
    }

    /** Call after the receivers stopped. */
    synchronized Histogram merged() {
        return Latency.merge(histograms.toArray(new Histogram[0]));
    }
}
