package io.sluice.bench.ingest;

import io.sluice.bench.internal.CpuTime;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestPipeline;
import io.sluice.ingest.Strategy;
import io.sluice.testkit.ClickHouseServer;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Where the offset-range strategy's time goes, without the producer competing for the cores: the events are first
 * written to a journal, then read once by a bare consumer (the cost of {@code Consumer.poll} alone), then drained into
 * ClickHouse by the pipeline. Per drain it prints rows/s, the CPU of each pipeline thread (by {@link ThreadMXBean},
 * so other processes on the machine do not inflate it) and of clickhouse-server, per million rows.
 *
 * <pre>
 * java &lt;sluice.jvm.args&gt; -cp bench-harness/target/sluice-bench.jar io.sluice.bench.ingest.OffsetRangeDrain \
 *     [--rows 200000] [--batch-rows 10000] [--runs 3]
 * </pre>
 *
 * Starts a private clickhouse-server (test-kit); the first drain is a warm-up and is not printed. Rows, table and
 * settings are those of the {@code ingest-stages} scenario's offset-range stage (2 partitions, 20 ms linger, 2 INSERTs
 * in flight); every drain is checked to land exactly its rows.
 */
public final class OffsetRangeDrain {
    private OffsetRangeDrain() {
    }

    public static void main(String[] args) throws Exception {
        int rows = 200_000;
        int batchRows = 10_000;
        int runs = 3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rows" -> rows = Integer.parseInt(args[++i]);
                case "--batch-rows" -> batchRows = Integer.parseInt(args[++i]);
                case "--runs" -> runs = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        Path work = Files.createTempDirectory("sluice-offset-range-drain");
        try (ClickHouseServer ch = ClickHouseServer.startPrivate(work)) {
            ch.query("CREATE DATABASE IF NOT EXISTS drain");
            System.out.printf("offset-range drain: %,d rows, batch.rows=%,d, linger.ms=20, max.in.flight=2, 2 partitions, clickhouse-server %s%n",
                    rows, batchRows, ch.query("SELECT version()").strip());
            for (int run = 0; run <= runs; run++) {
                drain(ch, work.resolve("journal-" + run), "drain.t" + run, rows, batchRows, run == 0 ? null : "drain " + run);
            }
        } finally {
            deleteTree(work);
        }
    }

    /** One drain; prints its line unless {@code label} is null (warm-up). */
    private static void drain(ClickHouseServer ch, Path dir, String table, int rows, int batchRows, String label) throws Exception {
        ch.query("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32, _sluice_offset UInt64)"
                + " ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("bench", 2));
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < rows; i++) {
                    producer.send(ProducerRecord.of("bench", null, IngestStageRunner.event(i)), (partition, offset, err) -> { });
                }
                producer.flush();
            }
            long pollCpu = threads.getCurrentThreadCpuTime();
            try (Consumer c = broker.newConsumer(ConsumerConfig.builder().groupId("poll-only").maxPollRecords(batchRows)
                    .offsetReset(OffsetReset.EARLIEST).build())) {
                c.subscribe("bench");
                for (long read = 0; read < rows; ) {
                    read += c.poll(Duration.ofMillis(100)).size();
                }
            }
            pollCpu = threads.getCurrentThreadCpuTime() - pollCpu;
            IngestConfig config = IngestConfig.builder("drain").clickHouseUrl(ch.url()).table(table).strategy(Strategy.OFFSET_RANGE)
                    .topic("bench").batchRows(batchRows).lingerMs(20).maxInFlight(2).build();
            double server = CpuTime.processSeconds(ch.pid());
            long start = System.nanoTime();
            Map<String, Double> cpu = new TreeMap<>();
            Map<String, Number> metrics;
            try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
                while (pipeline.metrics().get("rows_inserted").longValue() < rows) {
                    if (pipeline.failure() != null) {
                        throw new IllegalStateException("pipeline failed", pipeline.failure());
                    }
                    Thread.sleep(2);
                }
                metrics = pipeline.metrics();
                for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
                    if (t != null && t.getThreadName().contains("-drain-")) {
                        cpu.merge(t.getThreadName().replaceAll("-\\d+$", "-N"), threads.getThreadCpuTime(t.getThreadId()) / 1e9, Double::sum);
                    }
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            double serverSeconds = CpuTime.processSeconds(ch.pid()) - server;
            String landed = ch.query("SELECT count(), uniqExact(id) FROM " + table + " FORMAT TabSeparated").strip();
            if (!landed.equals(rows + "\t" + rows)) {
                throw new IllegalStateException(table + " holds (count, distinct ids) " + landed + ", expected " + rows);
            }
            if (label != null) {
                StringBuilder line = new StringBuilder(String.format("%s: %,.0f rows/s; CPU s per M rows: poll-only %.2f, clickhouse-server %.2f",
                        label, rows / seconds, CpuTime.perMillion(pollCpu / 1e9, rows), CpuTime.perMillion(serverSeconds, rows)));
                cpu.forEach((name, s) -> line.append(String.format(", %s %.2f", name, CpuTime.perMillion(s, rows))));
                line.append(String.format("; %s INSERTs, p50 %s ms", metrics.get("batches"), metrics.get("insert_latency_p50_ms")));
                System.out.println(line);
            }
        } finally {
            deleteTree(dir);
        }
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
