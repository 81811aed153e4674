package io.sluice.bench.scenario;

import io.sluice.bench.baseline.RawJournal;
import io.sluice.bench.baseline.RawRingBus;
import io.sluice.bench.internal.Await;
import io.sluice.bench.internal.Latency;
import io.sluice.core.WaitStrategyType;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The stream-processor workloads on the raw building blocks: Disruptor rings whose handlers append to plain
 * Chronicle Queues (what Sluice's produce path is made of), and plain Chronicle tailers.
 */
final class RawLoads {
    private static final Duration DEADLINE = Duration.ofSeconds(120);

    private RawLoads() {
    }

    /**
     * Same shape as {@link SluiceLoads#produce}: {@code threads} publishers, round-robin over the journal's
     * partitions, each partition a Disruptor ring whose one handler appends the bytes to its Chronicle Queue. Ends
     * when every event is appended.
     */
    static Run produce(RawJournal journal, int ringSize, WaitStrategyType wait, byte[] value, int threads, int perThread)
            throws Exception {
        int partitions = journal.partitions();
        long total = (long) threads * perThread;
        Histogram calls = threads == 1 ? Latency.newHistogram() : null;
        try (RawRingBus bus = new RawRingBus("raw-journal", partitions, ringSize, wait, threads > 1, p -> {
            ExcerptAppender appender = journal.appender(p);
            return (bytes, length, publishNanos, endOfBatch) -> RawJournal.append(appender, bytes, length);
        })) {
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t;
                Thread th = new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    for (int i = 0; i < perThread; i++) {
                        int p = (first + i) % partitions;
                        long t0 = System.nanoTime();
                        while (!bus.tryPublish(p, value)) {
                            Thread.onSpinWait();
                            t0 = System.nanoTime();
                        }
                        if (calls != null) {
                            Latency.record(calls, System.nanoTime() - t0);
                        }
                    }
                }, "raw-producer-" + t);
                senders.add(th);
                th.start();
            }
            long start = System.nanoTime();
            go.countDown();
            for (Thread th : senders) {
                th.join();
            }
            Await.count("raw appends", bus::processedTotal, total, DEADLINE);
            return new Run(total, System.nanoTime() - start, calls);
        }
    }

    /**
     * A single thread appending straight to one Chronicle Queue (no ring): the storage-write floor. The excerpts'
     * indexes go to {@code indexesOut[indexesFrom ..]} when it is not null.
     */
    static Run append(RawJournal journal, byte[] value, int count, long[] indexesOut, int indexesFrom) {
        ExcerptAppender appender = journal.appender(0);
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            long index = RawJournal.append(appender, value, value.length);
            if (indexesOut != null) {
                indexesOut[indexesFrom + i] = index;
            }
        }
        return Run.of(count, System.nanoTime() - start);
    }

    /**
     * One thread reads all partitions from the start; "batch" latency per {@code batch} excerpts, to match a poll of
     * that many records. Exactly {@code expected} excerpts, or the run fails.
     */
    static Run consume(RawJournal journal, long expected, int batch) {
        Histogram batches = Latency.newHistogram();
        byte[] buf = new byte[64 * 1024];
        long n = 0;
        long start = System.nanoTime();
        for (int p = 0; p < journal.partitions(); p++) {
            ExcerptTailer tailer = journal.tailer(p);
            long t0 = System.nanoTime();
            int inBatch = 0;
            while (RawJournal.read(tailer, buf) >= 0) {
                n++;
                if (++inBatch == batch) {
                    Latency.record(batches, System.nanoTime() - t0);
                    inBatch = 0;
                    t0 = System.nanoTime();
                }
            }
        }
        long nanos = System.nanoTime() - start;
        if (n != expected) {
            throw new IllegalStateException("raw read " + n + " records, expected exactly " + expected);
        }
        return new Run(n, nanos, batches);
    }

    /** {@code readers} threads share the partitions (reader i takes partitions i, i+readers, ...). */
    static Run parallelConsume(RawJournal journal, int readers, long expected) throws Exception {
        AtomicLong consumed = new AtomicLong();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < readers; r++) {
            int first = r;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                byte[] buf = new byte[64 * 1024];
                for (int p = first; p < journal.partitions(); p += readers) {
                    ExcerptTailer tailer = journal.tailer(p);
                    long local = 0;
                    while (RawJournal.read(tailer, buf) >= 0) {
                        local++;
                    }
                    consumed.addAndGet(local);
                }
            }, "raw-reader-" + r);
            threads.add(t);
            t.start();
        }
        long start = System.nanoTime();
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long nanos = System.nanoTime() - start;
        if (consumed.get() != expected) {
            throw new IllegalStateException("raw readers read " + consumed.get() + " records, expected exactly " + expected);
        }
        return Run.of(consumed.get(), nanos);
    }

    /** Random single-excerpt reads by Chronicle index. */
    static Run randomRead(RawJournal journal, long[] indexes, int reads, long seed) {
        ExcerptTailer tailer = journal.tailer(0);
        SplittableRandom random = new SplittableRandom(seed);
        byte[] buf = new byte[64 * 1024];
        Histogram h = Latency.newHistogram();
        long start = System.nanoTime();
        for (int i = 0; i < reads; i++) {
            long index = indexes[random.nextInt(indexes.length)];
            long t0 = System.nanoTime();
            if (!tailer.moveToIndex(index) || RawJournal.read(tailer, buf) < 0) {
                throw new IllegalStateException("raw random read missed index " + index);
            }
            Latency.record(h, System.nanoTime() - t0);
        }
        return new Run(reads, System.nanoTime() - start, h);
    }
}
