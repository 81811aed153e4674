package io.sluice.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static io.sluice.ingest.Tables.contentSummary;
import static io.sluice.ingest.Tables.event;
import static io.sluice.ingest.Tables.expectedSummary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Supervised ingest: transient failures are retried for as long as they last and reported as the pipeline's state;
 * configuration errors stop it with the reason; rows never take their provenance from event content.
 */
@ExtendWith(ServicesExtension.class)
class SupervisedIngestTest {
    static String db;

    @TempDir
    Path dir;
    Broker broker;

    @BeforeAll
    static void database(ClickHouseServer clickHouse) {
        db = clickHouse.createDatabase("supervised");
    }

    @AfterEach
    void closeBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    private void produce(String topic, List<byte[]> events) {
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (byte[] e : events) {
                producer.send(ProducerRecord.of(topic, null, e));
            }
            producer.flush();
        }
    }

    private void produce(String topic, int from, int to) {
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = from; i < to; i++) {
                producer.send(ProducerRecord.of(topic, null, event(i)));
            }
            producer.flush();
        }
    }

    private long committed(String group, String topic, int partitions) {
        long sum = 0;
        for (int p = 0; p < partitions; p++) {
            sum += broker.groups().committed(group, new TopicPartition(topic, p)).orElse(0);
        }
        return sum;
    }

    private IngestConfig.Builder journal(ClickHouseServer clickHouse, String table, String topic) {
        return Tables.config(clickHouse, table, Strategy.OFFSET_RANGE).topic(topic).batchRows(1_000).lingerMs(20);
    }

    @Test
    void aPipelineStartedWhileClickHouseIsDownRetriesAndLandsEverythingWhenItReturns(ClickHouseServer clickHouse) {
        assumeTrue(clickHouse.isPrivate(), "needs a private ClickHouse to stop");
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("away", 2));
        String table = Tables.createWithOffsets(clickHouse, db, "away");
        produce("away", 0, 5_000);
        IngestConfig config = journal(clickHouse, table, "away").build();
        clickHouse.stop();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            assertThat(pipeline.state()).isEqualTo(PipelineState.RETRYING);
            assertThat(pipeline.stateReason()).contains("ClickHouse");
            assertThat(pipeline.guarantee()).isNull(); // not known before the server answered
            clickHouse.start();
            Await.until("offsets committed", Duration.ofSeconds(90), () -> committed(config.group(), "away", 2) == 5_000);
            Await.until("state RUNNING", Duration.ofSeconds(30), () -> pipeline.state() == PipelineState.RUNNING);
            assertThat(pipeline.guarantee()).isEqualTo(Guarantee.EXACTLY_ONCE_IDEMPOTENT_INSERT);
            assertThat(pipeline.failure()).isNull();
        }
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(5_000));
    }

    @Test
    void aConfigurationErrorStopsThePipelineWithTheReason(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        String table = Tables.createWithOffsets(clickHouse, db, "no_topic");
        try (IngestPipeline pipeline = IngestPipeline.start(journal(clickHouse, table, "missing-topic").build(), broker::newConsumer)) {
            Await.until("state FAILED", Duration.ofSeconds(30), () -> pipeline.state() == PipelineState.FAILED);
            assertThat(pipeline.stateReason()).contains("missing-topic");
            assertThat(pipeline.failure()).isNotNull();
        }
    }

    @Test
    void schemaDriftIsRetriedAndReportedNotDeadLettered(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("drift", 1));
        String table = Tables.createWithOffsets(clickHouse, db, "drift");
        IngestConfig config = journal(clickHouse, table, "drift").build();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            produce("drift", 0, 1_000);
            Await.until("first rows committed", Duration.ofSeconds(60), () -> committed(config.group(), "drift", 1) == 1_000);
            clickHouse.execute("ALTER TABLE " + table + " DROP COLUMN value"); // the table changes under the pipeline
            produce("drift", 1_000, 2_000);
            Await.until("state RETRYING", Duration.ofSeconds(30), () -> pipeline.state() == PipelineState.RETRYING);
            assertThat(pipeline.stateReason()).contains("schema");
            assertThat(pipeline.metrics().get("dead_lettered").longValue()).isZero();
            clickHouse.execute("ALTER TABLE " + table + " ADD COLUMN value Int64 AFTER name");
            Await.until("every offset committed", Duration.ofSeconds(60), () -> committed(config.group(), "drift", 1) == 2_000);
            Await.until("state RUNNING", Duration.ofSeconds(30), () -> pipeline.state() == PipelineState.RUNNING);
            assertThat(pipeline.metrics().get("dead_lettered").longValue()).isZero();
        }
        assertThat(clickHouse.queryLong("SELECT count() FROM " + table)).isEqualTo(2_000);
        assertThat(clickHouse.queryLong("SELECT uniqExact(_sluice_offset) FROM " + table)).isEqualTo(2_000);
    }

    @Test
    void anEventCannotForgeItsOffsetColumnsAndIsDeadLetteredInstead(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("forged", 1));
        String table = Tables.createWithOffsets(clickHouse, db, "forged");
        // offsets 0..9 honest; 10 claims offset 11 (a later real event) and 11 is the real one; 12 spells the key with an escape
        List<byte[]> events = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            events.add(event(i));
        }
        events.add("{\"id\":10,\"name\":\"n10\",\"value\":30,\"_sluice_offset\":11}".getBytes(StandardCharsets.UTF_8));
        events.add(event(11));
        events.add("{\"id\":12,\"name\":\"n12\",\"value\":36,\"\\u005fsluice_partition\":7}".getBytes(StandardCharsets.UTF_8));
        // a value that merely mentions the name is not a key: accepted
        events.add("{\"id\":13,\"name\":\"\\\"_sluice_offset\\\":1\",\"value\":39}".getBytes(StandardCharsets.UTF_8));
        produce("forged", events);
        IngestConfig config = journal(clickHouse, table, "forged").build();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            Await.until("offsets committed", Duration.ofSeconds(60), () -> committed(config.group(), "forged", 1) == 14);
            assertThat(pipeline.metrics().get("dead_lettered").longValue()).isEqualTo(2);
        }
        assertThat(clickHouse.queryLines("SELECT _sluice_offset FROM " + table + " ORDER BY _sluice_offset"))
                .containsExactly("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "11", "13");
        assertThat(clickHouse.queryLines("SELECT error FROM " + table + "_dead_letters"))
                .anyMatch(e -> e.contains("_sluice_offset")).anyMatch(e -> e.contains("_sluice_partition"));
    }

    /** Typed rows whose encoder tries to write the provenance itself. */
    public static final class ForgingEncoder implements RowEncoder {
        @Override
        public List<String> columns() {
            return List.of("id", "_sluice_offset");
        }

        @Override
        public void encode(byte[] event, RowBinaryWriter out) {
            out.writeUInt64(1).writeUInt64(0);
        }
    }

    @Test
    void anEncoderThatWritesTheOffsetColumnsIsRefusedAtStart(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("typed_forged", 1));
        String table = Tables.createWithOffsets(clickHouse, db, "typed_forged");
        assertThatThrownBy(() -> IngestPipeline.start(journal(clickHouse, table, "typed_forged").rowEncoder(new ForgingEncoder()).build(),
                broker::newConsumer))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("_sluice_offset");
    }
}
