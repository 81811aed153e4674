package io.sluice.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.FaultProxy;
import io.sluice.testkit.FaultProxy.Fault;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.sluice.ingest.Tables.contentSummary;
import static io.sluice.ingest.Tables.event;
import static io.sluice.ingest.Tables.expectedSummary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
                .strategy(Strategy.OFFSET_RANGE).topic("late").batchRows(5_000).lingerMs(20).maxInFlight(3)
                .insertTimeoutMs(500).retryInitialMs(20).retryMaxMs(200).build();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            Await.until("offsets committed", Duration.ofSeconds(120), () -> committedTotal(config.group(), "late", 2) == n);
            assertThat(pipeline.metrics().get("retries").longValue()).isPositive();
            assertThat(pipeline.guarantee()).isEqualTo(Guarantee.EXACTLY_ONCE_IDEMPOTENT_INSERT);
        }
        awaitLateCopiesExecuted(clickHouse, table);
        assertThat(proxy.faultsInjected()).isPositive();
        assertThat(clickHouse.queryLong("SELECT uniqExact(_sluice_partition, _sluice_offset) FROM " + table)).isEqualTo(n);
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(n));
    }
    private IngestConfig.Builder lateConfig(String name, String url, String table, String topic) {
        return IngestConfig.builder(name).clickHouseUrl(url).table(table).strategy(Strategy.OFFSET_RANGE).topic(topic)
                .batchRows(5_000).lingerMs(20).maxInFlight(3).insertTimeoutMs(500).retryInitialMs(20).retryMaxMs(200);
    }

    @Test
    void aRevokedPartitionsLateInsertAddsNothingAfterItsNewOwnerLandedTheRange(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("revoked", 2));
        String table = Tables.createWithOffsets(clickHouse, db, "revoked");
        int n = 20_000;
        produce("revoked", 0, n);
        proxy = FaultProxy.forUrl(clickHouse.url());
        // Every INSERT of the first member reaches ClickHouse 3 s late, long after it timed out, until the second
        // member has landed a batch: the first member cannot commit anything before the second one took a
        // partition over, however slow the machine (the test used to let only the first 4 INSERTs be late, and under
        // load the first member's retries could land and commit everything before the second member joined).
        AtomicBoolean holdFirst = new AtomicBoolean(true);
        proxy.onRequest(r -> r.isInsertInto(table) && holdFirst.get() ? Fault.delay(Duration.ofMillis(3_000)) : Fault.PASS);
        IngestConfig slow = lateConfig("slow", proxy.url(), table, "revoked").group("shared").build();
        IngestConfig fast = lateConfig("fast", clickHouse.url(), table, "revoked").group("shared").build();
        try (IngestPipeline first = IngestPipeline.start(slow, broker::newConsumer)) {
            Await.until("the first member's INSERTs held by the proxy", Duration.ofSeconds(30), () -> proxy.delayedPending() > 0);
            try (IngestPipeline second = IngestPipeline.start(fast, broker::newConsumer)) {
                Await.until("the second member took a partition over and landed a batch", Duration.ofSeconds(120),
                        () -> second.metrics().get("rows_inserted").longValue() > 0);
                holdFirst.set(false);
                Await.until("offsets committed", Duration.ofSeconds(120), () -> committedTotal("shared", "revoked", 2) == n);
            }
        }
        awaitLateCopiesExecuted(clickHouse, table);
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(n));
    }

    @Test
    void responsesThatNeverComeLeaveNoDuplicate(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("silent", 2));
        String table = Tables.createWithOffsets(clickHouse, db, "silent");
        int n = 30_000;
        produce("silent", 0, n);
        proxy = FaultProxy.forUrl(clickHouse.url());
        AtomicLong inserts = new AtomicLong();
        proxy.onRequest(r -> r.isInsertInto(table) && inserts.incrementAndGet() % 2 == 0 ? Fault.DROP_RESPONSE : Fault.PASS);
        IngestConfig config = lateConfig("silent", proxy.url(), table, "silent").build();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            Await.until("offsets committed", Duration.ofSeconds(120), () -> committedTotal(config.group(), "silent", 2) == n);
        }
        awaitLateCopiesExecuted(clickHouse, table);
        assertThat(proxy.faultsInjected()).isPositive();
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(n));
    }

    @Test
    void aBisectedHalfArrivingLateAddsNothingAndTheBadRowIsDeadLettered(ClickHouseServer clickHouse) {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("bisect", 1));
        String table = Tables.createWithOffsets(clickHouse, db, "bisect");
        int n = 1_000;
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < n; i++) {
                producer.send(ProducerRecord.of("bisect", null, i == 700
                        ? "{\"id\":\"not a number\",\"name\":\"bad\",\"value\":0}".getBytes(java.nio.charset.StandardCharsets.UTF_8)
                        : event(i)));
            }
            producer.flush();
        }
        proxy = FaultProxy.forUrl(clickHouse.url());
        AtomicLong inserts = new AtomicLong();
        // INSERT 1: the whole batch, rejected (bad row); INSERT 2: its first half, which lands but reaches ClickHouse late
        proxy.onRequest(r -> r.isInsertInto(table) && inserts.incrementAndGet() == 2 ? Fault.delay(Duration.ofMillis(2_000)) : Fault.PASS);
        IngestConfig config = lateConfig("bisect", proxy.url(), table, "bisect").batchRows(1_000).lingerMs(2_000).build();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            Await.until("offsets committed", Duration.ofSeconds(60), () -> committedTotal(config.group(), "bisect", 1) == n);
            assertThat(pipeline.metrics().get("dead_lettered").longValue()).isEqualTo(1);
        }
        awaitLateCopiesExecuted(clickHouse, table);
        assertThat(proxy.faultsInjected()).isEqualTo(1);
        assertThat(clickHouse.queryLong("SELECT count() FROM " + table)).isEqualTo(n - 1);
        assertThat(clickHouse.queryLong("SELECT uniqExact(_sluice_offset) FROM " + table)).isEqualTo(n - 1);
        assertThat(clickHouse.queryLong("SELECT countIf(_sluice_offset = 700) FROM " + table)).isZero();
    }

    @Test
    void workerPoolWithEntryColumnsLandsEveryEventOnceWhenEveryThirdInsertArrivesLate(ClickHouseServer clickHouse,
                                                                                       io.sluice.testkit.RedisServer redis) throws Exception {
        String table = db + ".stream_late";
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_entry String,"
                + " _sluice_index UInt32) ENGINE = MergeTree ORDER BY (_sluice_entry, _sluice_index)");
        proxy = FaultProxy.forUrl(clickHouse.url());
        AtomicLong inserts = new AtomicLong();
        proxy.onRequest(r -> r.isInsertInto(table) && inserts.incrementAndGet() % 3 == 0
                ? Fault.delay(Duration.ofMillis(2_000)) : Fault.PASS);
        int n = 50_000;
        try (EventSink sink = EventSink.open(IngestConfig.builder("stream-late").clickHouseUrl(proxy.url()).table(table)
                .strategy(Strategy.WORKER_POOL).redisUrl(redis.url()).redisStream("it:late:" + System.nanoTime())
                .workers(2).batchRows(5_000).lingerMs(20).insertTimeoutMs(500).retryInitialMs(20).retryMaxMs(200).build())) {
            assertThat(sink.guarantee()).isEqualTo(Guarantee.EXACTLY_ONCE_ENTRY_COLUMNS);
            java.util.List<java.util.concurrent.CompletableFuture<Void>> writes = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                writes.add(sink.write(event(i)));
            }
            java.util.concurrent.CompletableFuture.allOf(writes.toArray(java.util.concurrent.CompletableFuture[]::new))
                    .get(60, java.util.concurrent.TimeUnit.SECONDS);
            Await.until("every event landed", Duration.ofSeconds(120), () -> sink.metrics().get("lag").longValue() == 0);
        }
        awaitLateCopiesExecuted(clickHouse, table);
        assertThat(proxy.faultsInjected()).isPositive();
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(n));
    }

    @Test
    void aReplicatedTableDropsTheLateCopyOfEveryThirdInsertWithAPrivateZooKeeper() {
        assumeTrue(ClickHouseServer.shared().isPrivate(), "needs private servers (ZooKeeper and a replicated ClickHouse)");
        ClickHouseServer replicated = ClickHouseServer.replicated();
        String rdb = replicated.createDatabase("replicated");
        String table = rdb + ".late";
        replicated.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                + " _sluice_offset UInt64) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/" + table + "', '{replica}')"
                + " ORDER BY (_sluice_partition, _sluice_offset)");
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("replicated", 2));
        int n = 50_000;
        produce("replicated", 0, n);
        proxy = FaultProxy.forUrl(replicated.url());
        AtomicLong inserts = new AtomicLong();
        proxy.onRequest(r -> r.isInsertInto(table) && inserts.incrementAndGet() % 3 == 0
                ? Fault.delay(Duration.ofMillis(2_000)) : Fault.PASS);
        IngestConfig config = lateConfig("replicated", proxy.url(), table, "replicated").build();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            assertThat(pipeline.guarantee()).isEqualTo(Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP);
            Await.until("offsets committed", Duration.ofSeconds(120), () -> committedTotal(config.group(), "replicated", 2) == n);
        }
        awaitLateCopiesExecuted(replicated, table);
        assertThat(proxy.faultsInjected()).isPositive();
        assertThat(contentSummary(replicated, table)).isEqualTo(expectedSummary(n));
    }
}
