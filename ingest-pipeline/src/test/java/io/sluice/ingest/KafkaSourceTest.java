package io.sluice.ingest;

import io.sluice.testkit.Await;
import io.sluice.testkit.ChildJvm;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.KafkaBroker;
import io.sluice.testkit.ServicesExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static io.sluice.ingest.Tables.event;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka as a source: a private single-node KRaft broker ({@link KafkaBroker}) and ClickHouse 18.16. The journal
 * strategy lands the Kafka topic with the same rule as a Sluice topic: offset columns filled with Kafka's partition
 * and offset, Kafka offsets committed only over landed ranges.
 */
@ExtendWith(ServicesExtension.class)
class KafkaSourceTest {
    static KafkaBroker kafka;
    static Admin admin;
    static String db;

    @BeforeAll
    static void start(ClickHouseServer clickHouse) {
        kafka = new KafkaBroker();
        kafka.start();
        admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrap()));
        db = clickHouse.createDatabase("kafka");
    }

    @AfterAll
    static void stop() {
        if (admin != null) {
            admin.close();
        }
        if (kafka != null) {
            kafka.close();
        }
    }

    private static void createTopic(String topic, int partitions) throws Exception {
        KafkaOffsets.createTopic(admin, kafka.bootstrap(), topic, partitions, (short) 1, Map.of());
    }

    /**
     * Sends events {@code from..to-1} keyed by id and checks every acknowledgement (acks=all). One request in flight:
     * right after a broker restart, pipelined idempotent batches were seen to loop on OUT_OF_ORDER_SEQUENCE_NUMBER.
     */
    private static void produce(String topic, int from, int to) throws Exception {
        Map<String, Object> props = Map.of("bootstrap.servers", kafka.bootstrap(), "acks", "all", "linger.ms", 5,
                "max.in.flight.requests.per.connection", 1);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> acks = new java.util.ArrayList<>();
            for (int i = from; i < to; i++) {
                acks.add(producer.send(new ProducerRecord<>(topic, Integer.toString(i).getBytes(StandardCharsets.UTF_8), event(i))));
            }
            producer.flush();
            for (var ack : acks) {
                ack.get(60, TimeUnit.SECONDS); // a send that failed fails the test here, naming Kafka's error
            }
        }
    }

    private static String createTable(ClickHouseServer clickHouse, String name) {
        String table = db + "." + name;
        // plain MergeTree on purpose: a duplicate would stay visible
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                + " _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        return table;
    }

    @Test
    void kafkaTopicLandsOnceAndItsOffsetsAreCommittedOverLandedRanges(ClickHouseServer clickHouse) throws Exception {
        String table = createTable(clickHouse, "orders");
        createTopic("orders", 3);
        int n = 20_000;
        produce("orders", 0, n);
        Properties p = new Properties();
        p.setProperty("ingest.orders.source", "kafka");
        p.setProperty("ingest.orders.kafka.bootstrap", kafka.bootstrap());
        p.setProperty("ingest.orders.topic", "orders");
        p.setProperty("ingest.orders.clickhouse.url", clickHouse.url());
        p.setProperty("ingest.orders.table", table);
        p.setProperty("ingest.orders.strategy", "journal");
        p.setProperty("ingest.orders.batch.rows", "2000");
        p.setProperty("ingest.orders.linger.ms", "20");
        IngestConfig config = IngestPipeline.configsFromProperties(p).get(0);
        try (IngestPipeline pipeline = IngestPipeline.start(config, null)) {
            Tables.awaitRows(clickHouse, table, n, Duration.ofSeconds(90));
            Await.until("Kafka offsets committed to the end", Duration.ofSeconds(30), () -> KafkaOffsets.committedTotal(admin, config.group()) == n);
            assertThat(pipeline.failure()).isNull();
        }
        assertThat(Tables.contentSummary(clickHouse, table)).isEqualTo(Tables.expectedSummary(n));
        // the offset columns hold Kafka's own partition and offset: each partition's offsets are 0..count-1
        assertThat(clickHouse.queryLines("SELECT _sluice_partition, count(), min(_sluice_offset), max(_sluice_offset)"
                + " FROM " + table + " GROUP BY _sluice_partition ORDER BY _sluice_partition"))
                .hasSize(3).allSatisfy(line -> {
                    String[] f = line.split("\t");
                    assertThat(Long.parseLong(f[2])).isZero();
                    assertThat(Long.parseLong(f[3])).isEqualTo(Long.parseLong(f[1]) - 1);
                });
    }

    @Test
    void ingesterSigkilledAndKafkaKilledMidRunLoseNothingAndDoubleNothing(ClickHouseServer clickHouse) throws Exception {
        String table = createTable(clickHouse, "crash");
        createTopic("crash", 2);
        int n = 60_000;
        produce("crash", 0, n);
        try (ChildJvm child = ChildJvm.start(CrashChild.class, "kafka", kafka.bootstrap(), clickHouse.url(), table, "crash")) {
            assertThat(child.readLine()).startsWith("started");
            Await.until("some rows landed", Duration.ofSeconds(90), () -> clickHouse.queryLong("SELECT count() FROM " + table) >= n / 4);
            child.kill();
        }
        long atKill = clickHouse.queryLong("SELECT count() FROM " + table);
        assertThat(atKill).isLessThan(n);
        IngestConfig config = IngestConfig.builder("crash").clickHouseUrl(clickHouse.url()).table(table)
                .strategy(Strategy.OFFSET_RANGE).topic("crash").source(IngestConfig.Source.KAFKA).kafkaBootstrap(kafka.bootstrap())
                .group("crash-kafka").batchRows(1_000).lingerMs(5).retryInitialMs(20).retryMaxMs(500).build();
        try (IngestPipeline pipeline = IngestPipeline.start(config, null)) {
            Await.until("the new member lands more rows", Duration.ofSeconds(90),
                    () -> clickHouse.queryLong("SELECT count() FROM " + table) > atKill);
            kafka.kill(); // SIGKILL the Kafka broker under the running ingester
            kafka.start();
            produce("crash", n, n + 5_000); // acknowledged after the restart
            Tables.awaitRows(clickHouse, table, n + 5_000, Duration.ofSeconds(120));
            Await.until("Kafka offsets committed to the end", Duration.ofSeconds(60), () -> KafkaOffsets.committedTotal(admin, "crash-kafka") == n + 5_000);
            System.out.println("kafka source: " + atKill + " rows at the ingester's SIGKILL; finishing pipeline " + pipeline.metrics());
        }
        assertThat(Tables.contentSummary(clickHouse, table)).isEqualTo(Tables.expectedSummary(n + 5_000));
    }
}
