package io.sluice.bench.scenario;

import io.sluice.bench.server.ClickHouseServer;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestPipeline;
import io.sluice.ingest.Strategy;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Drives ingest-pipeline's strategies as the 003 reference drove its stages: one client issues requests (events)
 * with at most {@link #WINDOW} outstanding, and a request's latency runs from its start until the strategy
 * confirms it (sync: the INSERT returned; async: ClickHouse accepted it; coalescing: its batch landed; Redis
 * strategies: XADD acknowledged; journal: the Sluice journal acknowledged it). Then it counts the rows in ClickHouse
 * until all have landed.
 */
final class SluiceIngestLoads {
    /**
     * Requests in flight from the load generator (the sync strategy blocks, so it has one). The reference's own
     * load had, by Little's law (throughput × latency), about 50 requests in flight for coalescing and 2,400–4,800
     * for the Redis stages; 4,096 lets batching strategies fill their batches.
     */
    static final int WINDOW = 4_096;

    /**
     * One stage run.
     *
     * @param requestsPerSecond events confirmed per second (the reference's "throughput")
     * @param latency           request latency (ns)
     * @param landedPerSecond   rows counted in ClickHouse per second, from the first request to the last row landed
     * @param queryableMillis   from the last confirmation until every row was queryable
     * @param heapPeakMiB       peak heap use sampled during the run (whole JVM, garbage included)
     * @param heapRetainedMiB   heap in use once every row landed, after a full GC, the strategy still open
     */
    record StageRun(long rows, double requestsPerSecond, Histogram latency, double landedPerSecond, double queryableMillis,
                    double heapPeakMiB, double heapRetainedMiB) {
    }

    private SluiceIngestLoads() {
    }

    static String createTable(ClickHouseServer ch, String table) throws Exception {
        ch.query("CREATE TABLE " + table + " (" + RowBinaryBatch.COLUMNS + ") ENGINE = MergeTree ORDER BY id");
        return table;
    }

    static StageRun sink(ClickHouseServer ch, IngestConfig config, int run, int events) throws Exception {
        Histogram latency = new ConcurrentHistogram(TimeUnit.MINUTES.toNanos(10), 3);
        Semaphore window = new Semaphore(WINDOW);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong confirmed = new AtomicLong();
        long epoch = System.currentTimeMillis() / 1000;
        HeapPeak heap = new HeapPeak();
        try (EventSink sink = EventSink.open(config)) {
            long start = System.nanoTime();
            for (int i = 0; i < events && failure.get() == null; i++) {
                byte[] event = RowBinaryBatch.json(run, i, epoch);
                window.acquire();
                long t0 = System.nanoTime();
                CompletableFuture<Void> f = sink.write(event);
                f.whenComplete((v, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    } else {
                        latency.recordValue(Math.min(System.nanoTime() - t0, latency.getHighestTrackableValue()));
                        confirmed.incrementAndGet();
                    }
                    window.release();
                });
                heap.sample();
            }
            window.acquire(WINDOW);
            long confirmedAt = System.nanoTime();
            if (failure.get() != null) {
                throw new IllegalStateException(config.strategy().configName() + " write failed", failure.get());
            }
            sink.flush();
            long landedAt = awaitRows(ch, config.table(), events, heap);
            return new StageRun(events, confirmed.get() * 1e9 / (confirmedAt - start), latency,
                    events * 1e9 / (landedAt - start), Math.max(0, landedAt - confirmedAt) / 1e6, heap.peakMiB(), heap.retainedMiB());
        }
    }

    /** The journal strategy: Sluice producer (acks=JOURNAL) → topic → IngestPipeline's consumer group → ClickHouse. */
    static StageRun journal(ClickHouseServer ch, Broker broker, IngestConfig config, int run, int events) throws Exception {
        broker.createTopicIfAbsent(TopicConfig.of(config.topic(), 1));
        Histogram latency = new ConcurrentHistogram(TimeUnit.MINUTES.toNanos(10), 3);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong confirmed = new AtomicLong();
        long epoch = System.currentTimeMillis() / 1000;
        HeapPeak heap = new HeapPeak();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer);
             Producer producer = broker.newProducer(ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
            long start = System.nanoTime();
            for (int i = 0; i < events; i++) {
                ProducerRecord record = ProducerRecord.of(config.topic(), RowBinaryBatch.json(run, i, epoch));
                long t0 = System.nanoTime();
                long r;
                while ((r = producer.trySend(record, (p, offset, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    } else {
                        latency.recordValue(Math.min(System.nanoTime() - t0, latency.getHighestTrackableValue()));
                    }
                    confirmed.incrementAndGet();
                })) == Producer.BACK_PRESSURED) {
                    Thread.onSpinWait();
                }
                if (r != Producer.ACCEPTED) {
                    throw new IllegalStateException("journal producer returned " + r);
                }
                heap.sample();
            }
            while (confirmed.get() < events) {
                LockSupport.parkNanos(100_000);
            }
            long confirmedAt = System.nanoTime();
            if (failure.get() != null) {
                throw new IllegalStateException("journal send failed", failure.get());
            }
            long landedAt = awaitRows(ch, config.table(), events, heap);
            if (pipeline.failure() != null) {
                throw new IllegalStateException("journal ingest failed", pipeline.failure());
            }
            return new StageRun(events, events * 1e9 / (confirmedAt - start), latency, events * 1e9 / (landedAt - start),
                    Math.max(0, landedAt - confirmedAt) / 1e6, heap.peakMiB(), heap.retainedMiB());
        }
    }

    /** Polls {@code count()} every 5 ms until {@code expected} rows are there (2 minutes at most). */
    private static long awaitRows(ClickHouseServer ch, String table, long expected, HeapPeak heap) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        long seen = 0;
        while (System.nanoTime() < deadline) {
            seen = Long.parseLong(ch.query("SELECT count() FROM " + table));
            if (seen >= expected) {
                if (seen > expected) {
                    throw new IllegalStateException(table + " has " + seen + " rows for " + expected + " events (duplicates)");
                }
                return System.nanoTime();
            }
            heap.sample();
            LockSupport.parkNanos(5_000_000);
        }
        throw new IllegalStateException(table + ": " + seen + " of " + expected + " rows landed within 2 minutes");
    }

    static IngestConfig.Builder config(ClickHouseServer ch, String table, Strategy strategy) {
        return IngestConfig.builder("bench-" + strategy.configName()).clickHouseUrl(ch.url()).table(table).strategy(strategy);
    }

    /** Heap-use peak, sampled by the load thread at most every millisecond. */
    private static final class HeapPeak {
        private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        private long peak;
        private long lastSample;

        void sample() {
            long now = System.nanoTime();
            if (now - lastSample > 1_000_000) {
                lastSample = now;
                peak = Math.max(peak, memory.getHeapMemoryUsage().getUsed());
            }
        }

        double peakMiB() {
            sample();
            return peak / (1024.0 * 1024.0);
        }

        double retainedMiB() {
            System.gc();
            return memory.getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
        }
    }
}
