package io.sluice.bench.scenario;

import io.sluice.core.TopicPartition;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One bit per record of a fixed set of partition ranges, set as records arrive from any number of threads: counts the
 * distinct records seen and the redeliveries (a record seen again, as a consumer group may redeliver what a member
 * polled before a rebalance moved its partition). One compare-and-set per record.
 */
final class DistinctOffsets {
    private final Map<Integer, AtomicLongArray> bits = new HashMap<>();
    private final Map<Integer, long[]> ranges = new HashMap<>();
    private final AtomicLong distinct = new AtomicLong();
    private final AtomicLong redelivered = new AtomicLong();

    /** @param ranges each partition's [start offset, end offset) */
    DistinctOffsets(Map<TopicPartition, long[]> ranges) {
        for (Map.Entry<TopicPartition, long[]> e : ranges.entrySet()) {
            long start = e.getValue()[0];
            long end = e.getValue()[1];
            bits.put(e.getKey().partition(), new AtomicLongArray((int) ((end - start + 63) >>> 6)));
            this.ranges.put(e.getKey().partition(), new long[]{start, end});
        }
    }

    /** Records one delivery; throws when the record lies outside the ranges (it was never sent in this run). */
    void add(int partition, long offset) {
        long[] range = ranges.get(partition);
        if (range == null || offset < range[0] || offset >= range[1]) {
            throw new IllegalStateException("partition " + partition + " offset " + offset + " was not sent in this run");
        }
        AtomicLongArray b = bits.get(partition);
        long i = offset - range[0];
        int word = (int) (i >>> 6);
        long mask = 1L << (i & 63);
        long old;
        do {
            old = b.get(word);
            if ((old & mask) != 0) {
                redelivered.incrementAndGet();
                return;
            }
        } while (!b.compareAndSet(word, old, old | mask));
        distinct.incrementAndGet();
    }

    long distinct() {
        return distinct.get();
    }

    long redelivered() {
        return redelivered.get();
    }
}
