package io.sluice.bench.scenario;

import io.sluice.bench.internal.Await;
import io.sluice.bench.internal.Latency;
import io.sluice.core.Broker;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.PartitionReader;
import io.sluice.core.Producer;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.TopicPartition;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The stream-processor workloads driven through Sluice's embedded API. */
final class SluiceLoads {
    private static final Duration DEADLINE = Duration.ofSeconds(120);

    private SluiceLoads() {
    }

    /**
     * {@code threads} threads each send {@code perThread} copies of {@code record} (no key, no partition: the producer
     * spreads them round-robin) with {@link Producer#trySend}, spinning on back-pressure. The run ends when every
     * send is acknowledged (at the producer's acks level). With one thread, the latency of each {@code trySend} call
     * is recorded.
     */
    static Run produce(Producer producer, ProducerRecord record, int threads, int perThread) throws Exception {
        long total = (long) threads * perThread;
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicLong notSent = new AtomicLong();
        DeliveryLedger ledger = new DeliveryLedger(Math.toIntExact(total));
        SendCallback callback = (partition, offset, error) -> {
            if (error != null) {
                failed.incrementAndGet();
            } else {
                ledger.record(partition, offset);
            }
            acked.incrementAndGet();
        };
        Histogram calls = threads == 1 ? Latency.newHistogram() : null;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> senders = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    long r;
                    long t0 = System.nanoTime();
                    while ((r = producer.trySend(record, callback)) == Producer.BACK_PRESSURED) {
                        Thread.onSpinWait();
                        t0 = System.nanoTime();
                    }
                    if (calls != null) {
                        Latency.record(calls, System.nanoTime() - t0);
                    }
                    if (r == Producer.CLOSED) {
                        failed.incrementAndGet();
                        notSent.addAndGet(perThread - i);
                        return;
                    }
                }
            }, "bench-producer-" + t);
            senders.add(th);
            th.start();
        }
        long start = System.nanoTime();
        go.countDown();
        for (Thread th : senders) {
            th.join();
        }
        Await.count("acknowledged sends", acked::get, total - notSent.get(), DEADLINE);
        long nanos = System.nanoTime() - start;
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " of " + total + " sends failed");
        }
        ledger.verify("acknowledged sends", total);
        return new Run(total, nanos, calls);
    }

    /**
     * Reads {@code expected} records from the start of {@code partitions} with one assigned consumer, polls of at most
     * {@code maxPoll}; latency per non-empty poll. Exactly {@code expected} distinct records, or the run fails.
     */
    static Run consume(Broker broker, Set<TopicPartition> partitions, long expected, int maxPoll) throws Exception {
        Histogram polls = Latency.newHistogram();
        // exactly once and in order: each partition must deliver the offset after the last one it delivered, from its
        // first retained one, a check of a few registers per record (the raw loop beside this one only counts; a
        // ledger of every (partition, offset) stored 8 bytes per record inside the timed loop and sorted them after)
        int maxPartition = partitions.stream().mapToInt(TopicPartition::partition).max().orElse(-1);
        long[] next = new long[maxPartition + 1];
        Arrays.fill(next, -1);
        for (TopicPartition tp : partitions) {
            next[tp.partition()] = broker.startOffset(tp);
        }
        if (partitions.stream().map(TopicPartition::topic).distinct().count() > 1) {
            throw new IllegalArgumentException("one topic's partitions expected, got " + partitions);
        }
        try (Consumer c = broker.newConsumer(ConsumerConfig.builder().clientId("bench-consume")
                .offsetReset(OffsetReset.EARLIEST).maxPollRecords(maxPoll).build())) {
            c.assign(partitions);
            c.seekToBeginning(partitions);
            long n = 0;
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            long start = System.nanoTime();
            while (n < expected) {
                long t0 = System.nanoTime();
                List<ConsumerRecord> batch = c.poll(Duration.ofMillis(100));
                if (!batch.isEmpty()) {
                    Latency.record(polls, System.nanoTime() - t0);
                    n += batch.size();
                    for (ConsumerRecord r : batch) {
                        int p = r.partition();
                        if (p >= next.length || next[p] < 0 || r.offset() != next[p]) {
                            throw new IllegalStateException("records consumed: partition " + p + " delivered offset "
                                    + r.offset() + " where " + (p < next.length && next[p] >= 0 ? "offset " + next[p] : "nothing")
                                    + " was due (a loss, a duplicate or a reordering)");
                        }
                        next[p]++;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("consumed " + n + " of " + expected + " before the deadline");
                }
            }
            long nanos = System.nanoTime() - start;
            if (n != expected) {
                throw new IllegalStateException("records consumed: " + n + ", " + expected + " expected");
            }
            return new Run(n, nanos, polls);
        }
    }

    /**
     * {@code members} consumers of one new group share the topic's partitions and read its {@code expected} records,
     * from the earliest offset, until every one of them arrived at least once ({@link DeliveredRanges}). The run is
     * timed from the moment every member has subscribed, so group joins and rebalances are included, to the poll that
     * delivered the end of the last partition; {@code afterJoinNanos} gets the same run timed from the first poll that
     * returned records (the group's first join left out, as Kafka's {@code ConsumerPerformance} leaves it out of
     * {@code fetch.nMsg.sec}; later rebalances stay in). Records redelivered after a rebalance are counted apart
     * (passed to {@code redelivered}) and not in the rate.
     */
    static Run groupConsume(Broker broker, String topic, String group, int members, long expected,
                            java.util.function.LongConsumer redelivered,
                            java.util.function.LongConsumer afterJoinNanos) throws Exception {
        java.util.Map<TopicPartition, long[]> ranges = new java.util.HashMap<>();
        long total = 0;
        for (TopicPartition tp : broker.partitionsOf(topic)) {
            long start = broker.startOffset(tp);
            long end = broker.endOffset(tp);
            ranges.put(tp, new long[]{start, end});
            total += end - start;
        }
        if (total != expected) {
            throw new IllegalStateException("topic " + topic + " holds " + total + " records, " + expected + " expected");
        }
        DeliveredRanges seen = new DeliveredRanges(ranges);
        // the clock is read by the member whose poll delivered the end of the last partition, not by a waiter with a
        // poll interval; whether no offset was skipped is checked after the run
        AtomicLong firstRecord = new AtomicLong();
        AtomicLong lastRecord = new AtomicLong();
        CountDownLatch subscribed = new CountDownLatch(members);
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int m = 0; m < members; m++) {
            String id = "member-" + m;
            Thread t = new Thread(() -> {
                try (Consumer c = broker.newConsumer(ConsumerConfig.builder().groupId(group).clientId(id)
                        .offsetReset(OffsetReset.EARLIEST).maxPollRecords(500).build())) {
                    c.subscribe(topic);
                    subscribed.countDown();
                    DeliveredRanges.Member delivered = seen.member();
                    go.await();
                    long deadline = System.nanoTime() + DEADLINE.toNanos();
                    while (!seen.reachedTheEnd() && System.nanoTime() < deadline) {
                        List<ConsumerRecord> polled = c.poll(Duration.ofMillis(20));
                        if (polled.isEmpty()) {
                            continue;
                        }
                        firstRecord.compareAndSet(0, System.nanoTime());
                        if (delivered.polled(polled)) {
                            lastRecord.set(System.nanoTime());
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                    subscribed.countDown();
                }
            }, "bench-group-" + id);
            threads.add(t);
            t.start();
        }
        if (!subscribed.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("group members did not subscribe within 60 s");
        }
        long start = System.nanoTime();
        go.countDown();
        Await.until("the group to deliver the end of every partition", seen::reachedTheEnd, DEADLINE);
        for (Thread t : threads) {
            t.join(30_000);
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException("a group member failed", errors.get(0));
        }
        seen.verify();
        redelivered.accept(seen.redelivered());
        afterJoinNanos.accept(lastRecord.get() - firstRecord.get());
        return new Run(expected, lastRecord.get() - start, null);
    }

    /**
     * Sequential read of a whole partition through a {@link PartitionReader}: {@link PartitionReader#readViews} (each
     * record copied into the reader's reused buffers, as a raw tailer reads into a buffer) or, {@code records},
     * {@link PartitionReader#read} (a {@code ConsumerRecord} with its own key and value arrays per record).
     */
    static Run sequentialRead(Broker broker, TopicPartition tp, long expected, boolean records) {
        try (PartitionReader reader = broker.openReader(tp)) {
            reader.seek(broker.startOffset(tp));
            long[] n = {0};
            long start = System.nanoTime();
            while (n[0] < expected) {
                int got = records ? reader.read(500, 1 << 20, r -> n[0]++) : reader.readViews(500, 1 << 20, v -> n[0]++);
                if (got == 0) {
                    throw new IllegalStateException("read " + n[0] + " of " + expected + " records");
                }
            }
            long nanos = System.nanoTime() - start;
            if (n[0] != expected) {
                throw new IllegalStateException("read " + n[0] + " records, expected exactly " + expected);
            }
            return new Run(n[0], nanos, null);
        }
    }

    /**
     * {@code reads} random single-record reads (seek + {@link PartitionReader#readViews}, the record copied into the
     * reader's reused buffers, as the raw side copies each excerpt into one reused array) within the partition.
     */
    static Run randomRead(Broker broker, TopicPartition tp, int reads, long seed) {
        try (PartitionReader reader = broker.openReader(tp)) {
            long first = broker.startOffset(tp);
            long end = broker.endOffset(tp);
            SplittableRandom random = new SplittableRandom(seed);
            Histogram h = Latency.newHistogram();
            int[] got = {0};
            long start = System.nanoTime();
            for (int i = 0; i < reads; i++) {
                long offset = random.nextLong(first, end);
                long t0 = System.nanoTime();
                reader.seek(offset);
                reader.readViews(1, 1 << 20, v -> got[0]++);
                Latency.record(h, System.nanoTime() - t0);
            }
            if (got[0] != reads) {
                throw new IllegalStateException("random reads returned " + got[0] + " of " + reads + " records");
            }
            return new Run(reads, System.nanoTime() - start, h);
        }
    }
}
