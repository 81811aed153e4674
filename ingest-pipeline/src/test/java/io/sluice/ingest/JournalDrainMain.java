package io.sluice.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.testkit.ClickHouseServer;

import java.nio.file.Files;
import java.nio.file.Path;

/** Measures how fast the journal strategy drains a pre-filled topic. Not a test. Args: events partitions. */
public final class JournalDrainMain {
    private JournalDrainMain() {
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int partitions = Integer.parseInt(args[1]);
        ClickHouseServer ch = ClickHouseServer.shared();
        String db = ch.createDatabase("drain");
        String t = db + ".t";
        ch.execute("CREATE TABLE " + t + " (id UInt64, name String, value Int64, _sluice_partition UInt32, _sluice_offset UInt64)"
                + " ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        Path dir = Files.createTempDirectory("drain");
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("d", partitions));
            long t0 = System.nanoTime();
            try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < n; i++) {
                    p.send(ProducerRecord.of("d", null, Tables.event(i)), (a, b, c) -> { });
                }
                p.flush();
            }
            System.out.printf("produced %,d in %.2fs%n", n, (System.nanoTime() - t0) / 1e9);
            long t1 = System.nanoTime();
            try (IngestPipeline pipeline = IngestPipeline.start(IngestConfig.builder("drain").clickHouseUrl(ch.url()).table(t)
                    .strategy(Strategy.OFFSET_RANGE).topic("d").batchRows(Integer.parseInt(args[2])).lingerMs(20)
                    .maxInFlight(Integer.parseInt(args[3])).build(), broker::newConsumer)) {
                io.sluice.testkit.Await.until(n + " rows drained", java.time.Duration.ofMinutes(10),
                        () -> ch.queryLong("SELECT count() FROM " + t) >= n);
                double s = (System.nanoTime() - t1) / 1e9;
                System.out.printf("drained %,d in %.2fs = %,.0f rows/s; %s%n", n, s, n / s, pipeline.metrics());
            }
        }
        System.exit(0);
    }
}
