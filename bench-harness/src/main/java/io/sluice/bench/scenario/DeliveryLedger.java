package io.sluice.bench.scenario;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The (partition, offset) of every record a run acknowledged or received, checked after the run: exactly as many as
 * were sent, each once. A duplicate standing in for a lost record fails here, where a {@code count >= sent} test would
 * pass it. Thread-safe for any number of recording threads (one atomic increment per record); checked once, after
 * they are done.
 */
final class DeliveryLedger {
    private static final int OFFSET_BITS = 40;
    private final long[] ids;
    private final AtomicInteger size = new AtomicInteger();

    /** @param capacity the most records one run may record (more is itself a failure, reported by {@link #verify}) */
    DeliveryLedger(int capacity) {
        this.ids = new long[capacity];
    }

    /** Records one delivery; past the capacity only the count grows. */
    void record(int partition, long offset) {
        int i = size.getAndIncrement();
        if (i < ids.length) {
            ids[i] = ((long) partition << OFFSET_BITS) | offset;
        }
    }

    int size() {
        return size.get();
    }

    /** Throws, naming {@code what}, unless exactly {@code expected} distinct (partition, offset) pairs were recorded. */
    void verify(String what, long expected) {
        int n = size.get();
        if (n != expected) {
            throw new IllegalStateException(what + ": " + n + " recorded, " + expected + " expected");
        }
        long[] sorted = Arrays.copyOf(ids, n);
        Arrays.sort(sorted);
        for (int i = 1; i < n; i++) {
            if (sorted[i] == sorted[i - 1]) {
                throw new IllegalStateException(what + ": partition " + (sorted[i] >>> OFFSET_BITS) + " offset "
                        + (sorted[i] & ((1L << OFFSET_BITS) - 1)) + " recorded twice");
            }
        }
    }
}
