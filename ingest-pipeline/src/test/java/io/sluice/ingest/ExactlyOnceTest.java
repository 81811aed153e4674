package io.sluice.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.core.testing.Await;
import io.sluice.ingest.testing.ClickHouseServer;
import io.sluice.ingest.testing.FaultProxy;
import io.sluice.ingest.testing.FaultProxy.Fault;
import io.sluice.ingest.testing.ServicesExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static io.sluice.ingest.Tables.contentSummary;
import static io.sluice.ingest.Tables.event;
import static io.sluice.ingest.Tables.expectedSummary;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly-once into a plain MergeTree on ClickHouse 18.16 while INSERTs reach the server late, after the client
 * timed out and retried: the late copy still executes, and must add nothing.
 */
@ExtendWith(ServicesExtension.class)
class ExactlyOnceTest {
    static String db;

    @TempDir
    Path dir;
    Broker broker;
    FaultProxy proxy;

    @BeforeAll
    static void database(ClickHouseServer clickHouse) {
        db = clickHouse.createDatabase("exactly_once");
    }

    @AfterEach
    void close() {
        if (proxy != null) {
            proxy.close();
        }
        if (broker != null) {
            broker.close();
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

    private long committedTotal(String group, String topic, int partitions) {
        long sum = 0;
        for (int p = 0; p < partitions; p++) {
            sum += broker.groups().committed(group, new TopicPartition(topic, p)).orElse(0);
        }
        return sum;
    }

    /** Waits until no delayed request is held by the proxy and no INSERT into the table runs on the server. */
    private void awaitLateCopiesExecuted(ClickHouseServer clickHouse, String table) {
        Await.until("late INSERTs forwarded", Duration.ofSeconds(60), () -> proxy.delayedPending() == 0);
        Await.until("late INSERTs executed", Duration.ofSeconds(60), () -> clickHouse.queryLong(
                "SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO " + table + "%'") == 0);
    }

    @Test
    void everyThirdInsertArrivingLateAfterATimeoutLandsEveryEventExactlyOnce(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("late", 2));
        String table = Tables.createWithOffsets(clickHouse, db, "late");
        int n = 100_000;
        produce("late", 0, n);
        proxy = FaultProxy.forUrl(clickHouse.url());
        AtomicLong inserts = new AtomicLong();
        proxy.onRequest(r -> r.isInsertInto(table) && inserts.incrementAndGet() % 3 == 0
                ? Fault.delay(Duration.ofMillis(2_000)) : Fault.PASS);
        IngestConfig config = IngestConfig.builder("late").clickHouseUrl(proxy.url()).table(table)
                .strategy(Strategy.JOURNAL).topic("late").batchRows(5_000).lingerMs(20).maxInFlight(3)
                .insertTimeoutMs(500).retryInitialMs(20).retryMaxMs(200).build();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            Await.until("offsets committed", Duration.ofSeconds(120), () -> committedTotal(config.group(), "late", 2) == n);
            assertThat(pipeline.metrics().get("retries").longValue()).isPositive();
        }
        awaitLateCopiesExecuted(clickHouse, table);
        assertThat(proxy.faultsInjected()).isPositive();
        assertThat(clickHouse.queryLong("SELECT uniqExact(_sluice_partition, _sluice_offset) FROM " + table)).isEqualTo(n);
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(n));
    }
}
