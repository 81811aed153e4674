package io.sluice.ingest;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.testkit.ChildJvm;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.sluice.ingest.Tables.event;
import static org.assertj.core.api.Assertions.assertThat;

/** The ingesting JVM is SIGKILLed mid-run; a new one finishes the job. Counts are checked in ClickHouse. */
@ExtendWith(ServicesExtension.class)
class SigkillTest {
    static String db;

    @TempDir
    Path dir;

    @BeforeAll
    static void database(ClickHouseServer clickHouse) {
        db = clickHouse.createDatabase("sigkill");
    }

    @Test
    void journalKilledMidRunLosesNothingAndDoublesNothing(ClickHouseServer clickHouse) throws Exception {
        String table = db + ".journal";
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                + " _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        int n = 60_000;
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("crash", 2));
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < n; i++) {
                    producer.send(ProducerRecord.of("crash", null, event(i)));
                }
                producer.flush();
            }
        }
        long atKill;
        try (ChildJvm child = ChildJvm.start(CrashChild.class, "journal", dir.toString(), clickHouse.url(), table, "crash")) {
            assertThat(child.readLine()).startsWith("started");
            Await.until("some rows landed", Duration.ofSeconds(60), () -> clickHouse.queryLong("SELECT count() FROM " + table) >= n / 4);
            child.kill();
            atKill = clickHouse.queryLong("SELECT count() FROM " + table);
        }
        assertThat(atKill).isLessThan(n);
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build());
             IngestPipeline pipeline = IngestPipeline.start(IngestConfig.builder("crash").clickHouseUrl(clickHouse.url())
                     .table(table).strategy(Strategy.OFFSET_RANGE).topic("crash").batchRows(1_000).lingerMs(5).build(),
                     broker::newConsumer)) {
            Tables.awaitRows(clickHouse, table, n, Duration.ofSeconds(120));
            Await.until("committed to the end", Duration.ofSeconds(30), () -> pipeline.metrics().get("lag").longValue() == 0);
        }
        assertThat(Tables.contentSummary(clickHouse, table)).isEqualTo(Tables.expectedSummary(n));
    }

    @Test
    void workerPoolKilledMidRunLosesNothingAndDoublesNothingWithEntryColumns(ClickHouseServer clickHouse, RedisServer redis)
            throws Exception {
        String table = db + ".worker_pool";
        // plain MergeTree on purpose: duplicates would stay visible
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_entry String,"
                + " _sluice_index UInt32) ENGINE = MergeTree ORDER BY id");
        String stream = "it:sigkill:" + System.nanoTime();
        int n = 60_000;
        RedisClient client = RedisClient.create(redis.url());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            c.setAutoFlushCommands(false);
            RedisAsyncCommands<String, String> r = c.async();
            List<RedisFuture<String>> acks = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                acks.add(r.xadd(stream, "e", new String(event(i))));
                if (acks.size() == 5_000) {
                    c.flushCommands();
                    for (RedisFuture<String> f : acks) {
                        f.get(10, TimeUnit.SECONDS);
                    }
                    acks.clear();
                }
            }
            c.flushCommands();
        } finally {
            client.shutdown();
        }
        try (ChildJvm child = ChildJvm.start(CrashChild.class, "worker-pool", redis.url(), clickHouse.url(), table, stream)) {
            assertThat(child.readLine()).startsWith("started");
            Await.until("some rows landed", Duration.ofSeconds(60), () -> clickHouse.queryLong("SELECT count() FROM " + table) >= n / 4);
            child.kill();
        }
        try (EventSink sink = EventSink.open(IngestConfig.builder("crash").clickHouseUrl(clickHouse.url()).table(table)
                .strategy(Strategy.WORKER_POOL).redisUrl(redis.url()).redisStream(stream).workers(2).batchRows(1_000)
                .lingerMs(5).redisClaimIdleMs(1_000).build())) {
            Await.until("stream drained", Duration.ofSeconds(120), () -> redis.commandLong("XLEN", stream) == 0);
            sink.flush();
            System.out.println("worker-pool SIGKILL: finishing sink " + sink.metrics());
        }
        long rows = clickHouse.queryLong("SELECT count() FROM " + table);
        System.out.println("worker-pool SIGKILL: " + n + " entries, " + rows + " rows");
        assertThat(Tables.contentSummary(clickHouse, table)).isEqualTo(Tables.expectedSummary(n)); // no loss, no duplicates
    }
}
