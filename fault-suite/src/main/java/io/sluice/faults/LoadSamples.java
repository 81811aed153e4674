package io.sluice.faults;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Latencies of a soak, per sampling interval: produce latency (send to acknowledgement, binary and HTTP producers
 * apart) and end to end (send to the first time a group member got the event). Ids are dense, so the send time of
 * an id is kept in an array sized for the run; an id beyond it is simply not sampled end to end.
 *
 * <p>Thread-safety: every method may be called from any thread; {@link #drain()} hands the interval's samples to
 * the sampler and starts a new interval.
 */
public final class LoadSamples {
    /** Percentiles of one interval, in microseconds; -1 when the interval had no sample. */
    public record Percentiles(long count, long p50, long p99, long p999, long max) {
        static Percentiles of(long[] nanos, int n) {
            if (n == 0) {
                return new Percentiles(0, -1, -1, -1, -1);
            }
            long[] a = Arrays.copyOf(nanos, n);
            Arrays.sort(a);
            return new Percentiles(n, at(a, 0.50), at(a, 0.99), at(a, 0.999), a[n - 1] / 1_000);
        }

        private static long at(long[] sorted, double q) {
            return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)] / 1_000;
        }
    }

    /** One interval's three distributions. */
    public record Interval(Percentiles produce, Percentiles http, Percentiles endToEnd) {
    }

    private final AtomicLongArray sentAt;
    private Samples produce = new Samples();
    private Samples http = new Samples();
    private Samples endToEnd = new Samples();

    /** @param maxIds ids from 0 to maxIds - 1 are sampled end to end */
    public LoadSamples(int maxIds) {
        this.sentAt = new AtomicLongArray(maxIds);
    }

    public void sent(long id, long nanoTime) {
        if (id < sentAt.length()) {
            sentAt.set((int) id, nanoTime);
        }
    }

    public synchronized void produced(long nanos) {
        produce.add(nanos);
    }

    public synchronized void producedOverHttp(long nanos) {
        http.add(nanos);
    }

    public void consumed(long id, long nanoTime) {
        if (id < sentAt.length()) {
            long at = sentAt.get((int) id);
            if (at != 0) {
                synchronized (this) {
                    endToEnd.add(nanoTime - at);
                }
            }
        }
    }

    /** The interval's percentiles; starts the next interval. */
    public Interval drain() {
        Samples p;
        Samples h;
        Samples e;
        synchronized (this) {
            p = produce;
            h = http;
            e = endToEnd;
            produce = new Samples();
            http = new Samples();
            endToEnd = new Samples();
        }
        return new Interval(Percentiles.of(p.values, p.n), Percentiles.of(h.values, h.n), Percentiles.of(e.values, e.n));
    }

    private static final class Samples {
        long[] values = new long[1024];
        int n;

        void add(long v) {
            if (n == values.length) {
                values = Arrays.copyOf(values, n * 2);
            }
            values[n++] = v;
        }
    }
}
