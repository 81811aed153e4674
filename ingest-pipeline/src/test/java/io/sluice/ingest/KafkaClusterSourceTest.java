package io.sluice.ingest;

import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.KafkaCluster;
import io.sluice.testkit.ServicesExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.sluice.ingest.Tables.event;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka as a source, in front of Sluice as users run it: a three-node KRaft cluster ({@link KafkaCluster}), a topic
 * replicated three times with {@code min.insync.replicas=2}, an idempotent producer with {@code acks=all}, and the
 * offset-range strategy into a plain {@code MergeTree} (where a duplicate would stay visible). While events flow, one
 * Kafka node after another is SIGKILLed and started again: partition leadership and the group coordinator move, the
 * ingester follows, and every acknowledged event lands exactly once.
 *
 * <p>{@code -Dsluice.kafka.cluster.rounds=N} (default 2) makes it a long run: N kill/restart rounds, one node each,
 * 10,000 events a round.
 */
@ExtendWith(ServicesExtension.class)
class KafkaClusterSourceTest {
    @Test
    void everyAcknowledgedEventLandsOnceWhileKafkaNodesAreKilledOneAfterAnother(ClickHouseServer clickHouse) throws Exception {
        int rounds = Integer.getInteger("sluice.kafka.cluster.rounds", 2);
        int perRound = 10_000;
        int n = (rounds + 1) * perRound;
        String table = clickHouse.createDatabase("kafka3") + ".events";
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                + " _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        try (KafkaCluster kafka = KafkaCluster.start(3);
             Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrap()))) {
            KafkaOffsets.createTopic(admin, kafka.bootstrap(), "events", 3, (short) 3, Map.of("min.insync.replicas", "2"));
            IngestConfig config = IngestConfig.builder("kafka3").clickHouseUrl(clickHouse.url()).table(table)
                    .strategy(Strategy.OFFSET_RANGE).topic("events").source(IngestConfig.Source.KAFKA)
                    .kafkaBootstrap(kafka.bootstrap()).group("kafka3").batchRows(1_000).lingerMs(20)
                    .retryInitialMs(20).retryMaxMs(1_000).build();
            Map<String, Object> producerProps = Map.of("bootstrap.servers", kafka.bootstrap(), "acks", "all",
                    "enable.idempotence", true, "linger.ms", 5, "delivery.timeout.ms", 120_000);
            AtomicInteger acked = new AtomicInteger();
            AtomicReference<Exception> sendFailure = new AtomicReference<>();
            try (IngestPipeline pipeline = IngestPipeline.start(config, null);
                 KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int round = 0; round <= rounds; round++) {
                    // round 0 with every node up; then each round SIGKILLs one node first (leaders of its partitions
                    // and maybe the group coordinator move), sends its events (acks=all: two in-sync replicas are
                    // enough), waits until they have landed and starts the node again before the next one goes
                    int victim = round == 0 ? 0 : 1 + (round - 1) % kafka.size();
                    if (victim > 0) {
                        kafka.node(victim).kill();
                    }
                    int from = round * perRound;
                    for (int i = from; i < from + perRound; i++) {
                        producer.send(new ProducerRecord<>("events", Integer.toString(i).getBytes(StandardCharsets.UTF_8), event(i)),
                                (metadata, e) -> {
                                    if (e != null) {
                                        sendFailure.compareAndSet(null, e);
                                    } else {
                                        acked.incrementAndGet();
                                    }
                                });
                    }
                    producer.flush();
                    long expected = from + perRound;
                    Await.until("round " + round + "'s events landed" + (victim > 0 ? " while node " + victim + " is dead" : ""),
                            Duration.ofSeconds(180), () -> rows(clickHouse, table) >= expected);
                    if (victim > 0) {
                        kafka.node(victim).start();
                    }
                }
                producer.flush();
                assertThat(sendFailure.get()).as("a send failed").isNull();
                assertThat(acked.get()).isEqualTo(n);
                Tables.awaitRows(clickHouse, table, n, Duration.ofSeconds(180));
                Await.until("Kafka offsets committed to the end", Duration.ofSeconds(60), () -> KafkaOffsets.committedTotal(admin, "kafka3") == n);
                assertThat(pipeline.failure()).isNull();
                System.out.println("kafka 3-node source: " + rounds + " node kills; " + pipeline.metrics());
            }
        }
        assertThat(Tables.contentSummary(clickHouse, table)).isEqualTo(Tables.expectedSummary(n));
    }

    private static long rows(ClickHouseServer clickHouse, String table) {
        return clickHouse.queryLong("SELECT count() FROM " + table);
    }

}
