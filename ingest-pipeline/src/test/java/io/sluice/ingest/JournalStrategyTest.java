package io.sluice.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;

import static io.sluice.ingest.Tables.contentSummary;
import static io.sluice.ingest.Tables.event;
import static io.sluice.ingest.Tables.expectedSummary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The journal strategy with an embedded broker: offsets committed only after ClickHouse accepted the rows. */
@ExtendWith(ServicesExtension.class)
class JournalStrategyTest {
    static String db;

    @TempDir
    Path dir;
    Broker broker;

    @BeforeAll
    static void database(ClickHouseServer clickHouse) {
        db = clickHouse.createDatabase("journal");
    }

    @AfterEach
    void closeBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    /** Plain MergeTree on purpose: a ReplacingMergeTree would hide duplicates at merge time. */
    static String createTableWithOffsets(ClickHouseServer clickHouse, String name) {
        String table = db + "." + name;
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                + " _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        return table;
    }

    private void produce(String topic, int from, int to) {
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = from; i < to; i++) {
                producer.send(ProducerRecord.of(topic, null, event(i)));
            }
            producer.flush();
        }
    }

    private IngestConfig journalConfig(ClickHouseServer clickHouse, String table, String topic) {
        return Tables.config(clickHouse, table, Strategy.OFFSET_RANGE).topic(topic).batchRows(2_000).lingerMs(20)
                .maxInFlight(3).build();
    }

    private long committedTotal(String group, String topic, int partitions) {
        long sum = 0;
        for (int p = 0; p < partitions; p++) {
            OptionalLong c = broker.groups().committed(group, new TopicPartition(topic, p));
            sum += c.orElse(0);
        }
        return sum;
    }

    @Test
    void journalLandsEveryEventOnceAndCommitsTheEndOffsets(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("orders", 3));
        String table = createTableWithOffsets(clickHouse, "orders");
        int n = 30_000;
        produce("orders", 0, n);
        IngestConfig config = journalConfig(clickHouse, table, "orders");
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            Tables.awaitRows(clickHouse, table, n, Duration.ofSeconds(60));
            io.sluice.testkit.Await.until("offsets committed", Duration.ofSeconds(30),
                    () -> committedTotal(config.group(), "orders", 3) == n);
            io.sluice.testkit.Await.until("the pipeline to count every row", Duration.ofSeconds(30),
                    () -> pipeline.metrics().get("rows_inserted").longValue() >= n);
            assertThat(pipeline.metrics().get("rows_inserted").longValue()).isEqualTo(n);
        }
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(n));
    }

    @Test
    void aRestartedJournalPipelineResumesFromTheCommittedOffsetWithoutDuplicates(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("clicks", 2));
        String table = createTableWithOffsets(clickHouse, "clicks");
        IngestConfig config = journalConfig(clickHouse, table, "clicks");
        produce("clicks", 0, 10_000);
        try (IngestPipeline first = IngestPipeline.start(config, broker::newConsumer)) {
            Tables.awaitRows(clickHouse, table, 10_000, Duration.ofSeconds(60));
            // ClickHouse can show the rows a moment before the inserter thread has counted its answer
            io.sluice.testkit.Await.until("the pipeline to count 10,000 rows", Duration.ofSeconds(30),
                    () -> first.metrics().get("rows_inserted").longValue() >= 10_000);
            assertThat(first.metrics().get("rows_inserted").longValue()).isEqualTo(10_000);
        }
        produce("clicks", 10_000, 20_000);
        try (IngestPipeline second = IngestPipeline.start(config, broker::newConsumer)) {
            Tables.awaitRows(clickHouse, table, 20_000, Duration.ofSeconds(60));
            io.sluice.testkit.Await.until("offsets committed", Duration.ofSeconds(30),
                    () -> committedTotal(config.group(), "clicks", 2) == 20_000);
            io.sluice.testkit.Await.until("the pipeline to count its rows", Duration.ofSeconds(30),
                    () -> second.metrics().get("rows_inserted").longValue() >= 10_000);
            assertThat(second.metrics().get("rows_inserted").longValue()).isEqualTo(10_000); // resumed, not replayed
        }
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(20_000));
    }

    @Test
    void rowsThatLandedButWereNotCommittedAreNotInsertedAgain(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("payments", 1));
        String table = createTableWithOffsets(clickHouse, "payments");
        produce("payments", 0, 5_000);
        // as if a crashed ingestor had inserted offsets 0..2999 but never committed them
        StringBuilder rows = new StringBuilder();
        for (int i = 0; i < 3_000; i++) {
            rows.append(i == 0 ? "" : ",").append("(").append(i).append(",'n").append(i).append("',").append(3 * i).append(",0,").append(i).append(")");
        }
        clickHouse.execute("INSERT INTO " + table + " VALUES " + rows);
        IngestConfig config = journalConfig(clickHouse, table, "payments");
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            Tables.awaitRows(clickHouse, table, 5_000, Duration.ofSeconds(60));
            io.sluice.testkit.Await.until("offsets committed", Duration.ofSeconds(30),
                    () -> committedTotal(config.group(), "payments", 1) == 5_000);
            assertThat(pipeline.metrics().get("duplicates_skipped").longValue()).isEqualTo(3_000);
        }
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(5_000));
    }

    @Test
    void clickHouseStoppedMidRunAndStartedAgainLosesNothingAndDoublesNothing(ClickHouseServer clickHouse) {
        assumeTrue(clickHouse.isPrivate(), "needs a private ClickHouse to stop");
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("outage", 2));
        String table = createTableWithOffsets(clickHouse, "outage");
        IngestConfig config = journalConfig(clickHouse, table, "outage");
        int n = 40_000;
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            produce("outage", 0, n / 2);
            Tables.awaitRows(clickHouse, table, 1, Duration.ofSeconds(60));
            clickHouse.kill();
            produce("outage", n / 2, n);
            io.sluice.testkit.Await.until("retries while ClickHouse is down", Duration.ofSeconds(30),
                    () -> pipeline.metrics().get("retries").longValue() > 0);
            clickHouse.start();
            Tables.awaitRows(clickHouse, table, n, Duration.ofSeconds(90));
            io.sluice.testkit.Await.until("offsets committed", Duration.ofSeconds(60),
                    () -> committedTotal(config.group(), "outage", 2) == n);
        }
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(n));
    }
}
