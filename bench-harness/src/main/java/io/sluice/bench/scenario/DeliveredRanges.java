package io.sluice.bench.scenario;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the members of a consumer group delivered, checked against the partition ranges that were sent: every record
 * at least once (a group may redeliver what a member polled before a rebalance moved its partition; those are
 * counted) and none that was not sent. A member records each poll as runs of consecutive offsets in a list of its own
 * and publishes, per partition, only the highest offset it reached: the per-record work is a comparison, as a raw
 * reader counting its records does, not a shared compare-and-set per record (that cost the group rows up to a fifth of
 * their time, a cost the raw readers they are set against do not pay). Whether every offset arrived is decided after
 * the run, from the runs ({@link #verify}).
 */
final class DeliveredRanges {
    private final long[] start;
    private final long[] end;
    /** per partition: the highest offset + 1 any member has delivered */
    private final AtomicLongArray reached;
    private final AtomicInteger partitionsReached = new AtomicInteger();
    private final List<Member> members = new ArrayList<>();
    private long redelivered = -1;

    /** @param ranges each partition's [start offset, end offset); partitions numbered 0..n-1 */
    DeliveredRanges(Map<TopicPartition, long[]> ranges) {
        int n = ranges.size();
        start = new long[n];
        end = new long[n];
        for (Map.Entry<TopicPartition, long[]> e : ranges.entrySet()) {
            int p = e.getKey().partition();
            if (p < 0 || p >= n) {
                throw new IllegalArgumentException("partitions must be numbered 0.." + (n - 1) + ", got " + p);
            }
            start[p] = e.getValue()[0];
            end[p] = e.getValue()[1];
        }
        reached = new AtomicLongArray(n);
        for (int p = 0; p < n; p++) {
            reached.set(p, start[p]);
            if (start[p] == end[p]) {
                partitionsReached.incrementAndGet();
            }
        }
    }

    /** A recorder for one member's thread. */
    synchronized Member member() {
        Member m = new Member();
        members.add(m);
        return m;
    }

    /** True once every partition's last offset was delivered by some member (not yet that none was skipped). */
    boolean reachedTheEnd() {
        return partitionsReached.get() == start.length;
    }

    /** One member's deliveries: runs of consecutive offsets {partition, first, last}. Its own thread only. */
    final class Member {
        private final List<long[]> runs = new ArrayList<>();
        private long[] open;

        /**
         * Records one poll's records.
         *
         * @return true if this poll delivered the last partition's end: the group has reached the end of every partition
         */
        boolean polled(List<ConsumerRecord> records) {
            boolean last = false;
            for (int i = 0; i < records.size(); i++) {
                ConsumerRecord r = records.get(i);
                int p = r.partition();
                long offset = r.offset();
                if (open != null && open[0] == p && open[2] + 1 == offset) {
                    open[2] = offset;
                } else {
                    last |= publish();
                    open = new long[]{p, offset, offset};
                    runs.add(open);
                }
            }
            return publish() | last;
        }

        /** Publishes how far the open run reached; true if that completed the last partition. */
        private boolean publish() {
            if (open == null) {
                return false;
            }
            int p = (int) open[0];
            if (p < 0 || p >= start.length || open[1] < start[p] || open[2] >= end[p]) {
                throw new IllegalStateException("partition " + p + " offsets " + open[1] + ".." + open[2] + " were not sent in this run");
            }
            long next = open[2] + 1;
            long before = reached.getAndAccumulate(p, next, Math::max);
            return before < end[p] && next == end[p] && partitionsReached.incrementAndGet() == start.length;
        }
    }

    /**
     * After the members stopped: every sent offset was delivered at least once (throws otherwise); counts the
     * redeliveries.
     */
    synchronized void verify() {
        long again = 0;
        for (int p = 0; p < start.length; p++) {
            List<long[]> runs = new ArrayList<>();
            for (Member m : members) {
                for (long[] r : m.runs) {
                    if (r[0] == p) {
                        runs.add(r);
                    }
                }
            }
            runs.sort(Comparator.comparingLong(r -> r[1]));
            long next = start[p];
            for (long[] r : runs) {
                if (r[1] > next) {
                    throw new IllegalStateException("partition " + p + " offsets " + next + ".." + (r[1] - 1) + " were never delivered");
                }
                again += Math.min(r[2] + 1, next) - r[1]; // the part of the run delivered before
                next = Math.max(next, r[2] + 1);
            }
            if (next != end[p]) {
                throw new IllegalStateException("partition " + p + " offsets " + next + ".." + (end[p] - 1) + " were never delivered");
            }
        }
        redelivered = again;
    }

    /** Records delivered more than once; after {@link #verify}. */
    long redelivered() {
        if (redelivered < 0) {
            throw new IllegalStateException("verify() first");
        }
        return redelivered;
    }
}
