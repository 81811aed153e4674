package io.sluice.bench.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.TopicConfig;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestPipeline;
import io.sluice.ingest.RowBinaryWriter;
import io.sluice.ingest.Strategy;
import org.HdrHistogram.Recorder;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * Runs one ingest stage end to end and measures what the reference measured (producer-side throughput, average
 * and P99 latency until the write was confirmed, heap) plus what it did not: rows per second actually landed in
 * ClickHouse (counted there) and ingest→queryable latency. Also measures the raw ceiling: pre-built 10,000-row
 * batches inserted straight over HTTP. Used by the harness's ingest-stages report and runnable on its own:
 * {@code java ... io.sluice.bench.ingest.IngestStageRunner --clickhouse URL --redis URL [--scale 1.0]}.
 *
 * <p>Rows are {@code {"id":i,"name":"n<i>","value":3i}} into {@code (id UInt64, name String, value Int64)
 * MergeTree ORDER BY id}. One producer thread. Queryable latency of event i = first time a
 * {@code SELECT count(), max(id)} poll (every 10 ms) saw {@code max(id) >= i}, minus the time i was written —
 * an approximation that is exact for in-order landing.
 */
public final class IngestStageRunner {

    /** One stage's figures. Latencies in ms, heap in MiB. */
    public record StageResult(String stage, long events, double seconds, double throughputPerSec, double avgLatencyMs,
                              double p99LatencyMs, double landedRowsPerSec, double queryableP50Ms, double queryableP99Ms,
                              double peakHeapMb) {
        public String markdownRow(double baselineThroughput) {
            return String.format("| %s | %,d | %,.0f | %.3f | %.3f | %,.0f | %.0f | %.0f | %.0f | %.1fx |", stage, events,
                    throughputPerSec, avgLatencyMs, p99LatencyMs, landedRowsPerSec, queryableP50Ms, queryableP99Ms,
                    peakHeapMb, throughputPerSec / baselineThroughput);
        }

        public static String markdownHeader() {
            return "| Stage | Events | Throughput (events/s) | Avg latency (ms) | P99 latency (ms) | Landed in ClickHouse (rows/s)"
                    + " | Queryable P50 (ms) | Queryable P99 (ms) | Peak heap (MB) | vs baseline |\n"
                    + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|";
        }
    }

    /** Where to run: ClickHouse and Redis URLs and a database for the stage tables. */
    public record Target(String clickHouseUrl, String redisUrl, String database) {
    }

    private final Target target;
    private final ClickHouseRequests http;

    public IngestStageRunner(Target target) {
        this.target = target;
        this.http = new ClickHouseRequests(target.clickHouseUrl(), Duration.ofSeconds(60));
        http.query("CREATE DATABASE IF NOT EXISTS " + target.database());
    }

    static byte[] event(long i) {
        return ("{\"id\":" + i + ",\"name\":\"n" + i + "\",\"value\":" + (3 * i) + "}").getBytes(StandardCharsets.UTF_8);
    }

    private String freshTable(String name, boolean offsetColumns) {
        String t = target.database() + "." + name;
        http.query("DROP TABLE IF EXISTS " + t + "_sluice_buffer");
        http.query("DROP TABLE IF EXISTS " + t);
        http.query("CREATE TABLE " + t + " (id UInt64, name String, value Int64"
                + (offsetColumns ? ", _sluice_partition UInt32, _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)"
                : ") ENGINE = MergeTree ORDER BY id"));
        return t;
    }

    /** Polls count()/max(id) to time landing and queryability, and samples the heap. */
    private final class Prober implements AutoCloseable {
        final String table;
        final long[] writtenAt;
        final Histogram queryable = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
        final Thread thread;
        volatile boolean running = true;
        volatile long landedAtNanos;
        volatile long peakHeap;
        long seenMax = -1;

        Prober(String table, long[] writtenAt) {
            this.table = table;
            this.writtenAt = writtenAt;
            this.thread = new Thread(this::run, "sluice-bench-prober");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            Runtime rt = Runtime.getRuntime();
            while (running) {
                peakHeap = Math.max(peakHeap, rt.totalMemory() - rt.freeMemory());
                String[] r = http.query("SELECT count(), max(id) FROM " + table + " FORMAT TabSeparated").strip().split("\t");
                long now = System.nanoTime();
                long count = Long.parseLong(r[0]);
                long max = count == 0 ? -1 : Long.parseLong(r[1]);
                for (long i = seenMax + 1; i <= max && i < writtenAt.length; i++) {
                    if (writtenAt[(int) i] != 0) {
                        queryable.recordValue(Math.max(0, (now - writtenAt[(int) i]) / 1_000));
                    }
                }
                seenMax = Math.max(seenMax, max);
                if (count >= writtenAt.length) {
                    landedAtNanos = now;
                    return;
                }
                LockSupport.parkNanos(10_000_000L);
            }
        }

        void awaitLanded(Duration deadline) {
            try {
                thread.join(deadline.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (landedAtNanos == 0) {
                throw new IllegalStateException("not all " + writtenAt.length + " rows landed in " + table + " within " + deadline);
            }
        }

        @Override
        public void close() {
            running = false;
        }
    }

    /** Runs a sink strategy with {@code events} events from one producer thread. */
    public StageResult runSink(String stage, Strategy strategy, int events, java.util.function.UnaryOperator<IngestConfig.Builder> tune) {
        String table = freshTable("stage_" + strategy.name().toLowerCase(), false);
        String stream = "sluice:bench:" + strategy.configName() + ":" + System.nanoTime();
        IngestConfig config = tune.apply(IngestConfig.builder("bench-" + strategy.configName()).clickHouseUrl(target.clickHouseUrl())
                .table(table).strategy(strategy).redisUrl(target.redisUrl()).redisStream(stream)).build();
        Recorder latency = new Recorder(TimeUnit.MINUTES.toNanos(10), 3);
        long[] writtenAt = new long[events];
        long start;
        long confirmedAt;
        Prober prober;
        try (EventSink sink = EventSink.open(config)) {
            prober = new Prober(table, writtenAt);
            List<CompletableFuture<Void>> all = new ArrayList<>(events);
            start = System.nanoTime();
            for (int i = 0; i < events; i++) {
                byte[] e = event(i);
                while (true) {
                    long t0 = System.nanoTime();
                    try {
                        CompletableFuture<Void> f = sink.write(e);
                        writtenAt[i] = t0;
                        all.add(f.whenComplete((ok, err) -> latency.recordValue(System.nanoTime() - t0)));
                        break;
                    } catch (BackPressureException bp) {
                        Thread.onSpinWait();
                    }
                }
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
            confirmedAt = System.nanoTime();
            prober.awaitLanded(Duration.ofMinutes(5));
            verifyExactlyLanded(table, events);
        }
        if (strategy.usesRedis()) {
            dropStream(stream);
        }
        return result(stage, events, start, confirmedAt, latency.getIntervalHistogram(), prober);
    }

    /** The journal strategy: an embedded broker (temporary directory), a producer, and the ingest pipeline. */
    public StageResult runJournal(String stage, int events, int partitions, java.util.function.UnaryOperator<IngestConfig.Builder> tune) {
        String table = freshTable("stage_journal", true);
        Path dir;
        try {
            dir = Files.createTempDirectory("sluice-bench-journal");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Recorder latency = new Recorder(TimeUnit.MINUTES.toNanos(10), 3);
        long[] writtenAt = new long[events];
        long start;
        long confirmedAt;
        Prober prober;
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("bench", partitions));
            IngestConfig config = tune.apply(IngestConfig.builder("bench-journal").clickHouseUrl(target.clickHouseUrl())
                    .table(table).strategy(Strategy.OFFSET_RANGE).topic("bench")).build();
            try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer);
                 Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                prober = new Prober(table, writtenAt);
                AtomicLong failed = new AtomicLong();
                start = System.nanoTime();
                for (int i = 0; i < events; i++) {
                    long t0 = System.nanoTime();
                    writtenAt[i] = t0;
                    producer.send(ProducerRecord.of("bench", null, event(i)), (partition, offset, err) -> {
                        if (err != null) {
                            failed.incrementAndGet();
                        }
                        latency.recordValue(System.nanoTime() - t0);
                    });
                }
                producer.flush();
                confirmedAt = System.nanoTime();
                if (failed.get() > 0) {
                    throw new IllegalStateException(failed.get() + " sends failed");
                }
                prober.awaitLanded(Duration.ofMinutes(5));
                verifyExactlyLanded(table, events);
                if (pipeline.failure() != null) {
                    throw new IllegalStateException("journal pipeline failed", pipeline.failure());
                }
            }
        } finally {
            deleteTree(dir);
        }
        return result(stage, events, start, confirmedAt, latency.getIntervalHistogram(), prober);
    }

    /**
     * A run counts only if ClickHouse holds exactly the events written: {@code events} rows with {@code events}
     * distinct ids {@code 0 .. events-1} — no loss, no duplicate, nothing else. (The prober stops at
     * {@code count() >= events}; a duplicate standing in for a lost row would pass that test, not this one.)
     */
    private void verifyExactlyLanded(String table, int events) {
        String[] r = http.query("SELECT count(), uniqExact(id), min(id), max(id) FROM " + table + " FORMAT TabSeparated")
                .strip().split("\t");
        long count = Long.parseLong(r[0]);
        long distinct = Long.parseLong(r[1]);
        long min = Long.parseLong(r[2]);
        long max = Long.parseLong(r[3]);
        if (count != events || distinct != events || min != 0 || max != events - 1) {
            throw new IllegalStateException(table + " holds " + count + " rows with " + distinct + " distinct ids in ["
                    + min + ", " + max + "]; expected exactly " + events + " rows with ids 0.." + (events - 1));
        }
    }

    private StageResult result(String stage, int events, long start, long confirmedAt, Histogram latencyNanos, Prober prober) {
        double seconds = (confirmedAt - start) / 1e9;
        double landedSeconds = (prober.landedAtNanos - start) / 1e9;
        return new StageResult(stage, events, seconds, events / seconds, latencyNanos.getMean() / 1e6,
                latencyNanos.getValueAtPercentile(99) / 1e6, events / landedSeconds,
                prober.queryable.getValueAtPercentile(50) / 1e3, prober.queryable.getValueAtPercentile(99) / 1e3,
                prober.peakHeap / (1024.0 * 1024.0));
    }

    /** Raw ceiling: {@code batches} pre-built batches of {@code rows} rows, one INSERT at a time. Returns rows/s. */
    public double rawCeiling(boolean rowBinary, int batches, int rows) {
        String table = freshTable(rowBinary ? "raw_rowbinary" : "raw_jsoneachrow", false);
        byte[] body;
        if (rowBinary) {
            RowBinaryWriter w = new RowBinaryWriter(rows * 24);
            for (int i = 0; i < rows; i++) {
                w.writeUInt64(i).writeString("n" + i).writeInt64(3L * i);
            }
            body = java.util.Arrays.copyOf(w.array(), w.size());
        } else {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < rows; i++) {
                sb.append(new String(event(i), StandardCharsets.UTF_8)).append('\n');
            }
            body = sb.toString().getBytes(StandardCharsets.UTF_8);
        }
        String sql = rowBinary ? "INSERT INTO " + table + " (id, name, value) FORMAT RowBinary" : "INSERT INTO " + table + " FORMAT JSONEachRow";
        http.insert(sql, body); // warm-up
        long start = System.nanoTime();
        for (int b = 0; b < batches; b++) {
            http.insert(sql, body);
        }
        double secs = (System.nanoTime() - start) / 1e9;
        return (double) batches * rows / secs;
    }

    private void dropStream(String stream) {
        io.lettuce.core.RedisClient c = io.lettuce.core.RedisClient.create(target.redisUrl());
        try (var conn = c.connect()) {
            conn.sync().del(stream, stream + ":dead-letters");
        } finally {
            c.shutdown();
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // temp dir left behind
        }
    }

    /** The stage runner's command line (picocli). */
    @picocli.CommandLine.Command(name = "IngestStageRunner", mixinStandardHelpOptions = true, synopsisHeading = "usage: ",
            description = "Runs the ingest stages against a running ClickHouse and Redis and prints the Markdown table.")
    static final class Options implements java.util.concurrent.Callable<Integer> {
        @picocli.CommandLine.Option(names = "--clickhouse", required = true, paramLabel = "URL", description = "ClickHouse HTTP interface")
        String clickHouse;
        @picocli.CommandLine.Option(names = "--redis", required = true, paramLabel = "URL", description = "redis://host:port")
        String redis;
        @picocli.CommandLine.Option(names = "--scale", defaultValue = "1.0", description = "workload scale (default: ${DEFAULT-VALUE})")
        double scale;
        @picocli.CommandLine.Option(names = "--stages", defaultValue = "all", paramLabel = "LIST",
                description = "stages to run, from raw,1,2,3,4,5,6 (default: ${DEFAULT-VALUE})")
        String stages;

        @Override
        public Integer call() {
            run(clickHouse, redis, scale, stages);
            return 0;
        }
    }

    /** Runs every stage and prints the Markdown table. */
    public static void main(String[] args) {
        System.exit(new picocli.CommandLine(new Options()).execute(args));
    }

    private static void run(String ch, String redis, double scale, String only) {
        IngestStageRunner r = new IngestStageRunner(new Target(ch, redis, "sluice_bench"));
        int big = (int) (500_000 * scale);
        int warm = Math.max(10_000, big / 10);
        java.util.Set<String> run = java.util.Set.of((only.equals("all") ? "raw,1,2,3,4,5,6" : only).split(","));
        if (run.contains("raw")) {
            double rawRb = r.rawCeiling(true, (int) Math.max(5, 50 * scale), 10_000);
            double rawJson = r.rawCeiling(false, (int) Math.max(5, 50 * scale), 10_000);
            System.out.printf("raw ceiling, 10,000-row batches, one INSERT at a time: RowBinary %,.0f rows/s, JSONEachRow %,.0f rows/s%n",
                    rawRb, rawJson);
        }
        List<StageResult> results = new ArrayList<>();
        if (run.contains("1")) {
            results.add(r.runSink("01-sync-insert", Strategy.SYNC, (int) Math.max(200, 1_000 * scale), b -> b));
        }
        if (run.contains("2")) {
            results.add(r.runSink("02-async-insert", Strategy.ASYNC, (int) Math.max(1_000, 10_000 * scale), b -> b.maxInFlight(32)));
        }
        if (run.contains("3")) {
            r.runSink("03-coalescing", Strategy.COALESCING, warm, b -> b.batchRows(50_000).maxInFlight(2).lingerMs(50)); // JIT warm-up, not reported
            results.add(r.runSink("03-coalescing", Strategy.COALESCING, big, b -> b.batchRows(50_000).maxInFlight(2).lingerMs(50)));
        }
        if (run.contains("4")) {
            r.runSink("04-redis-stream", Strategy.REDIS_STREAM, warm, b -> b.batchRows(50_000).lingerMs(50)); // JIT warm-up, not reported
            results.add(r.runSink("04-redis-stream", Strategy.REDIS_STREAM, big, b -> b.batchRows(50_000).lingerMs(50)));
        }
        if (run.contains("5")) {
            r.runSink("05-worker-pool", Strategy.WORKER_POOL, warm, b -> b.batchRows(50_000).lingerMs(50).workers(2)); // JIT warm-up, not reported
            results.add(r.runSink("05-worker-pool", Strategy.WORKER_POOL, big, b -> b.batchRows(50_000).lingerMs(50).workers(2)));
        }
        if (run.contains("6")) {
            r.runJournal("06-journal", warm, 2, b -> b.batchRows(50_000).lingerMs(50).maxInFlight(2)); // JIT warm-up, not reported
            results.add(r.runJournal("06-journal", big, 2, b -> b.batchRows(50_000).lingerMs(50).maxInFlight(2)));
        }
        if (results.isEmpty()) {
            return;
        }
        System.out.println(StageResult.markdownHeader());
        for (StageResult s : results) {
            System.out.println(s.markdownRow(results.get(0).throughputPerSec()));
        }
    }
}
