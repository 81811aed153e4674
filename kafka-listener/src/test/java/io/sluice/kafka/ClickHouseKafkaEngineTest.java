package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ClickHouse's Kafka table engine (Debian's ClickHouse 18.16, linking the system librdkafka 2.0.2) reads a Sluice
 * topic through the listener as a consumer group, and a materialized view moves the rows into a MergeTree table.
 * A private ClickHouse server of its own (test-kit; clickhouse-server must be installed, as for the ingest tests),
 * stopped at the end.
 */
class ClickHouseKafkaEngineTest {
    private static final int RECORDS = 1000;

    @TempDir
    Path dir;

    @Test
    void theKafkaTableEngineReadsASluiceTopicIntoAMaterializedView() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir.resolve("data"));
             ClickHouseServer clickhouse = ClickHouseServer.startPrivate(dir.resolve("clickhouse"))) {
            kafka.broker.createTopic(TopicConfig.of("clicks", 2));
            try (KafkaProducer<String, String> producer =
                         new KafkaProducer<>(kafka.clientProperties(), new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < RECORDS; i++) {
                    producer.send(new ProducerRecord<>("clicks", i % 2, null, "{\"id\":" + i + ",\"page\":\"p" + (i % 7) + "\"}"));
                }
                producer.flush();
            }

            // ClickHouse 18.16 sets no auto.offset.reset, so librdkafka starts a group without commits at the end
            // of each partition: the group's offsets are committed at 0 first (an assign()-mode commit, allowed
            // while the group has no members), as for a group that already read nothing
            Properties group = kafka.clientProperties();
            group.put("group.id", "clickhouse-readers");
            try (KafkaConsumer<String, String> committer =
                         new KafkaConsumer<>(group, new StringDeserializer(), new StringDeserializer())) {
                committer.commitSync(Map.of(new TopicPartition("clicks", 0), new OffsetAndMetadata(0),
                        new TopicPartition("clicks", 1), new OffsetAndMetadata(0)));
            }

            String db = clickhouse.createDatabase("kafka_engine");
            clickhouse.execute("CREATE TABLE " + db + ".clicks_queue (id UInt64, page String) ENGINE = Kafka('"
                    + kafka.bootstrap() + "', 'clicks', 'clickhouse-readers', 'JSONEachRow')");
            clickhouse.execute("CREATE TABLE " + db + ".clicks (id UInt64, page String) ENGINE = MergeTree ORDER BY id");
            clickhouse.execute("CREATE MATERIALIZED VIEW " + db + ".clicks_mv TO " + db + ".clicks AS SELECT id, page FROM "
                    + db + ".clicks_queue");

            try {
                Await.until(() -> "ClickHouse rows: " + clickhouse.query("SELECT count() FROM " + db + ".clicks").trim(),
                        Duration.ofSeconds(60), () -> clickhouse.queryLong("SELECT count() FROM " + db + ".clicks") >= RECORDS);
            } catch (AssertionError e) {
                printServerLogs(dir.resolve("clickhouse"));
                throw e;
            }
            assertThat(clickhouse.queryLong("SELECT count() FROM " + db + ".clicks")).isEqualTo(RECORDS);
            assertThat(clickhouse.queryLong("SELECT uniqExact(id) FROM " + db + ".clicks")).isEqualTo(RECORDS);
            assertThat(clickhouse.queryLong("SELECT sum(id) FROM " + db + ".clicks")).isEqualTo((long) RECORDS * (RECORDS - 1) / 2);
            // the engine commits what each block read (asynchronously, after the block is inserted)
            try (Admin admin = Admin.create(kafka.clientProperties())) {
                Await.until("clickhouse-readers committed 500 + 500", Duration.ofSeconds(30), () -> {
                    try {
                        return admin.listConsumerGroupOffsets("clickhouse-readers").partitionsToOffsetAndMetadata()
                                .get(10, TimeUnit.SECONDS).values().stream().mapToLong(OffsetAndMetadata::offset).sum() == RECORDS;
                    } catch (Exception e) {
                        return false;
                    }
                });
            }
            System.out.println("ClickHouse " + clickhouse.query("SELECT version()").trim() + " read " + RECORDS + " records");
            clickhouse.execute("DROP TABLE " + db + ".clicks_mv");
            clickhouse.execute("DROP TABLE " + db + ".clicks_queue");
        }
    }

    /** ClickHouse's own logs (its directory is deleted when it stops), so a failure shows what the engine saw. */
    private static void printServerLogs(Path parent) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(parent)) {
            for (Path log : files.filter(f -> f.toString().endsWith(".log")).toList()) {
                System.out.println("==== " + log);
                java.nio.file.Files.readAllLines(log).stream().skip(0).limit(400).forEach(System.out::println);
            }
        }
    }
}
